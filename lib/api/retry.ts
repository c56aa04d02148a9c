// Read-modify-write loops racing other writers: each try reads, changes and
// writes; a write that finds the object changed since its read answers RETRY
// and the loop tries again, up to one limit shared by every such loop (the
// store's guaranteedUpdate, the API's update, patch, apply and delete, the
// gateway's status writes to a remote core backend).

/**
 * Tries of one read-modify-write racing other writers before it gives up with
 * a conflict (409 through the API). The one limit of every retry loop.
 */
export const CONFLICT_ATTEMPTS = 16;

/** What one try of a read-modify-write answers when the object changed between its read and its write. */
export const RETRY: unique symbol = Symbol('retry on conflict');

/**
 * Runs `attempt` (read, modify, write) again while it answers RETRY, at most
 * CONFLICT_ATTEMPTS times in all; then throws what `exhausted` makes.
 * `attempt` gets the number of tries made before it.
 */
export async function retryOnConflict<T>(attempt: (tried: number) => Promise<T | typeof RETRY>, exhausted: () => Error): Promise<T> {
  for (let tried = 0; tried < CONFLICT_ATTEMPTS; tried++) {
    const r = await attempt(tried);
    if (r !== RETRY) return r;
  }
  throw exhausted();
}
