// Runs the authenticators: the first success wins; a request that presents
// no credential any of them recognises is anonymous (when --anonymous-auth)
// or 401; one that presents only failing credentials is 401. Every 401 is the
// same generic Status; what went wrong goes to the log only. An authenticator
// that breaks (throws something other than AuthnError) counts as a failure of
// that method, so the order of authenticators never decides between a
// success and a 500.
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import { unauthorized } from '../../lib/api/status.js';
import { spanAttribute, type Trace } from '../../lib/tracing/span.js';
import { ANONYMOUS_RESULT, AUTHENTICATED_GROUP, AuthnError, type Authenticator, type AuthnResult } from './types.js';

export interface UnionOptions {
  anonymous: boolean;
  log?: (msg: string) => void;
}

export class UnionAuthenticator {
  constructor(
    private readonly authenticators: readonly Authenticator[],
    private readonly opts: UnionOptions,
  ) {}

  /**
   * `trace`: the recorded request's authentication span. A success is answered at once while the methods
   * asked answer at once (cached credentials: no promise and no microtask turn for a cached request); from
   * the first method that answers with a promise on, the rest is awaited in order. A failure is always a
   * rejection, never a throw.
   */
  authenticate(req: IncomingMessage, trace?: Trace): AuthnResult | Promise<AuthnResult> {
    // Made at the first failure: a request whose first method answers makes no list.
    let failures: string[] | undefined;
    const list = this.authenticators;
    for (let i = 0; i < list.length; i++) {
      const a = list[i]!;
      let result: AuthnResult | null | Promise<AuthnResult | null>;
      try {
        result = a.authenticate(req, trace);
      } catch (err) {
        (failures ??= []).push(failureOf(a, err));
        continue;
      }
      if (result instanceof Promise) return this.#awaiting(req, trace, i, result, failures ?? []);
      if (result && result.user.username !== '') return this.#accepted(a, result, trace);
      if (result) (failures ??= []).push(emptyUser(a));
    }
    try {
      return this.#none(req, trace, failures ?? []);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The rest of the methods, from the `i`th, whose answer `pending` is. */
  async #awaiting(req: IncomingMessage, trace: Trace | undefined, i: number, pending: Promise<AuthnResult | null>, failures: string[]): Promise<AuthnResult> {
    const list = this.authenticators;
    for (let next: AuthnResult | null | Promise<AuthnResult | null> = pending; ;) {
      const a = list[i]!;
      let result: AuthnResult | null;
      try {
        result = await next;
      } catch (err) {
        failures.push(failureOf(a, err));
        result = null;
      }
      const done = this.#settle(a, result, trace, failures);
      if (done) return done;
      if (++i >= list.length) break;
      try {
        next = list[i]!.authenticate(req, trace);
      } catch (err) {
        next = Promise.reject(err);
      }
    }
    return this.#none(req, trace, failures);
  }

  /** A method's answer: its user (in system:authenticated), or undefined to ask the next method. */
  #settle(a: Authenticator, result: AuthnResult | null, trace: Trace | undefined, failures: string[]): AuthnResult | undefined {
    if (result && result.user.username !== '') return this.#accepted(a, result, trace);
    if (result) failures.push(emptyUser(a));
    return undefined;
  }

  #accepted(a: Authenticator, result: AuthnResult, trace: Trace | undefined): AuthnResult {
    spanAttribute(trace, 'authentication.authenticator', a.name);
    return withAuthenticatedGroup(result, a.name);
  }

  /** No method accepted: 401, or anonymous. */
  #none(req: IncomingMessage, trace: Trace | undefined, failures: string[]): AuthnResult {
    if (failures.length > 0 || req.headers.authorization !== undefined) {
      // The credential itself is never logged; the methods' messages do not contain it.
      this.opts.log?.(
        `authentication failed for ${req.method} ${(req.url ?? '').split('?', 1)[0]}: ${failures.join('; ') || 'no authenticator accepted the Authorization header'}`,
      );
      throw unauthorized();
    }
    if (!this.opts.anonymous) throw unauthorized();
    spanAttribute(trace, 'authentication.authenticator', 'anonymous');
    return ANONYMOUS_RESULT;
  }
}

function emptyUser(a: Authenticator): string {
  return `${a.name}: empty user name`;
}

function failureOf(a: Authenticator, err: unknown): string {
  if (err instanceof AuthnError) return `${a.name}: ${err.message}`;
  return `${a.name}: internal error: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * Results that methods cache (per connection, per token) get their system:authenticated form built once.
 * A memo, not per-request state: keyed by a frozen result, and the form it maps to follows from it alone
 * (a result comes from one method, so `method` is the same each time).
 */
const withGroup = new WeakMap<AuthnResult, AuthnResult>();

/** Every authenticated user is in system:authenticated (added once); `method` names the result when its method did not. */
export function withAuthenticatedGroup(result: AuthnResult, method?: string): AuthnResult {
  const groups = result.user.groups;
  const named = result.method !== undefined || method === undefined;
  if (named && groups.includes(AUTHENTICATED_GROUP)) return result;
  let done = withGroup.get(result);
  if (done === undefined) {
    // Frozen: shared by every request the cached result serves, and memos downstream key on its identity.
    const user: UserInfo = groups.includes(AUTHENTICATED_GROUP)
      ? result.user
      : Object.freeze({ ...result.user, groups: Object.freeze([...groups, AUTHENTICATED_GROUP]) as string[] });
    done = Object.freeze({ ...result, user, ...(named ? {} : { method }) });
    withGroup.set(result, done);
  }
  return done;
}
