// Runs the authenticators in order: the first success wins; a request that
// presents no credential any of them recognises is anonymous (when enabled);
// one that presents only failing credentials is rejected (401).
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import { unauthorized } from '../../lib/api/status.js';
import { ANONYMOUS, AuthnError, type Authenticator, type AuthnResult } from './types.js';

export interface UnionOptions {
  anonymous: boolean;
  log?: (msg: string) => void;
}

export class UnionAuthenticator {
  constructor(private readonly authenticators: readonly Authenticator[], private readonly opts: UnionOptions) {}

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const failures: string[] = [];
    for (const a of this.authenticators) {
      let result: AuthnResult | null;
      try {
        result = await a.authenticate(req);
      } catch (err) {
        if (!(err instanceof AuthnError)) throw err;
        failures.push(`${a.name}: ${err.message}`);
        continue;
      }
      if (result) return withAuthenticatedGroup(result);
    }
    if (failures.length > 0 || req.headers.authorization !== undefined) {
      this.opts.log?.(`authentication failed: ${failures.join('; ') || 'no authenticator accepted the bearer token'}`);
      throw unauthorized();
    }
    if (!this.opts.anonymous) throw unauthorized();
    return { user: ANONYMOUS };
  }
}

/** Every authenticated user is in system:authenticated. */
function withAuthenticatedGroup(result: AuthnResult): AuthnResult {
  const groups = result.user.groups;
  if (groups.includes('system:authenticated')) return result;
  const user: UserInfo = { ...result.user, groups: [...groups, 'system:authenticated'] };
  return Object.freeze({ ...result, user });
}
