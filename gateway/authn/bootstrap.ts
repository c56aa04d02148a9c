// Bootstrap tokens (--enable-bootstrap-token-auth): `<id>.<secret>` bearer
// tokens backed by `bootstrap-token-<id>` secrets in kube-system, read
// through the core backend's ObjectSource on every request (its cache, live
// on a miss) so that a deleted or edited secret counts at once (through
// another process: once its change arrives). The user is `system:bootstrap:<id>` in
// `system:bootstrappers` plus the secret's auth-extra-groups.
import { timingSafeEqual } from 'node:crypto';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import {
  BOOTSTRAP_TOKEN_NAMESPACE,
  BOOTSTRAP_TOKEN_RE,
  BOOTSTRAP_TOKEN_SECRET_PREFIX,
  BOOTSTRAP_USER_PREFIX,
  bootstrapGroups,
  isExpired,
  parseBootstrapSecret,
} from '../../lib/bootstrap/token.js';
import type { BearerToken, TokenAuthenticator } from './token.js';
import { AuthnError, type AuthnResult } from './types.js';

export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'bootstrap-token';

  constructor(
    private readonly objects: ObjectSource,
    private readonly clock: () => number = Date.now,
  ) {}

  async authenticateToken({ value: token }: BearerToken): Promise<AuthnResult | null> {
    const m = BOOTSTRAP_TOKEN_RE.exec(token);
    if (!m) return null; // not a bootstrap token; another method may know it
    const [, id, presented] = m as unknown as [string, string, string];
    const name = `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`;
    const secret = await this.objects.lookup('', 'secrets', BOOTSTRAP_TOKEN_NAMESPACE, name);
    if (!secret) return null;
    const fail = (why: string): never => {
      throw new AuthnError(this.name, `secret ${BOOTSTRAP_TOKEN_NAMESPACE}/${name}: ${why}`);
    };
    if (secret.metadata.deletionTimestamp) fail('is being deleted');
    const parsed = parseBootstrapSecret(secret);
    if (typeof parsed === 'string') return fail(parsed);
    // Both are 16 characters of [a-z0-9] here, so the comparison is over equal lengths.
    if (!timingSafeEqual(Buffer.from(parsed.secret), Buffer.from(presented))) fail('token secret does not match');
    if (parsed.id !== id) fail('token id does not match');
    if (isExpired(parsed, this.clock())) fail('token has expired');
    if (!parsed.usages.has('authentication')) fail('usage-bootstrap-authentication is not "true"');
    let groups: string[];
    try {
      groups = bootstrapGroups(parsed);
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err));
    }
    return Object.freeze({
      user: Object.freeze({ username: `${BOOTSTRAP_USER_PREFIX}${id}`, groups }),
      ...(parsed.expiresAt !== undefined ? { expiresAt: parsed.expiresAt } : {}),
      method: this.name,
    });
  }
}
