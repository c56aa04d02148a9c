// The one loop for a read-modify-write that tries again when another writer
// got there first (a store revision conflict, an API server's 409): the
// store's guaranteedUpdate, the API's update, patch, apply and delete, the
// garbage collector, the controllers' create-or-reconcile loops, and the
// gateway's status writes to a remote core backend. As apiserver's
// GuaranteedUpdate, a try follows the conflicting one at once: the conflict
// says the object changed, so a fresh read already has what to retry on.

/**
 * Tries of one read-modify-write racing other writers before it gives up with
 * a conflict (409 through the API): the store's and the API's limit, and the
 * default of every loop that does not name its own.
 */
export const CONFLICT_ATTEMPTS = 16;

/** What one try of a read-modify-write answers when the object changed between its read and its write. */
export const RETRY: unique symbol = Symbol('retry on conflict');

/** When every try conflicted: the error to throw, or the value a caller that may give up answers with. */
export type Exhausted<T> = (() => Error) | { readonly giveUp: T };

/**
 * Runs `attempt` (read, modify, write) again while it answers RETRY, at most
 * `attempts` times in all; then throws what `exhausted` makes, or answers its
 * `giveUp`. `attempt` gets the number of tries made before it.
 */
export async function retryOnConflict<T>(
  attempt: (tried: number) => Promise<T | typeof RETRY>,
  exhausted: Exhausted<T>,
  attempts: number = CONFLICT_ATTEMPTS,
): Promise<T> {
  for (let tried = 0; tried < attempts; tried++) {
    const r = await attempt(tried);
    if (r !== RETRY) return r;
  }
  if (typeof exhausted === 'function') throw exhausted();
  return exhausted.giveUp;
}
