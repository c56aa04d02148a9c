// The tests' one way to wait for something that happens a moment later (a
// watch-fed cache, a controller, a log written at the end of a turn): poll,
// within a bound that is a limit, not a timing assertion.
import { inspect } from 'node:util';

/** What a probe answers: undefined or false while the awaited thing has not happened. */
export type Probe<T> = () => T | undefined | false | Promise<T | undefined | false>;

export interface Wait {
  /** How long to keep polling before failing (default 10 s). */
  timeoutMs?: number;
  /** The pause between two probes (default 50 ms). */
  intervalMs?: number;
}

/**
 * Calls `probe` until it answers something other than undefined or false and
 * resolves with that answer. A probe that throws is retried (a server still
 * starting refuses connections). Fails after timeoutMs with `what` and the
 * last answer or error seen, so a test whose awaited thing never happens says
 * what it was waiting for.
 */
export async function eventually<T>(what: string, probe: Probe<T>, { timeoutMs = 10_000, intervalMs = 50 }: Wait = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = `last answer: ${String(v)}`;
    } catch (err) {
      last = `last error: ${err instanceof Error ? err.message : inspect(err, { depth: 2 })}`;
    }
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${last})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
