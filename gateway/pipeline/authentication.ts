// The authentication step (kube's WithAuthentication): the authenticator
// says who is asking or throws (401, or a 500 for its own failure); either
// way the attempt is counted, and a failure is audited and, on HTTP/2, ends
// the connection after the answer. Credentials and proxy identity headers go
// no further than this step.
import { StatusError } from '../../lib/api/status.js';
import { carryHeader } from '../../lib/http/carried.js';
import { inSpan } from '../../lib/tracing/span.js';
import { observeAuthentication } from '../metrics/requests.js';
import { assignAuditId } from './audit.js';
import type { ChainConfig } from './config.js';
import type { RequestContext } from './context.js';
import { goAwayAfter, maybeGoAway } from './goaway.js';
import { stripIdentityHeaders } from './identityheaders.js';

export async function authenticate(ctx: RequestContext, cfg: ChainConfig): Promise<void> {
  const { req, res } = ctx;
  const a0 = performance.now();
  try {
    // The authenticators get the authentication span's trace (a webhook's call hangs under it).
    ctx.authn = ctx.trace
      ? await inSpan(ctx.trace, 'authentication', {}, async (_span, t) => cfg.authenticator.authenticate(req, t))
      : await cfg.authenticator.authenticate(req);
    observeAuthentication('success', (performance.now() - a0) / 1000);
  } catch (err) {
    observeAuthentication(err instanceof StatusError && err.status.code === 401 ? 'failure' : 'error', (performance.now() - a0) / 1000);
    goAwayAfter(req, res);
    if (cfg.audit) {
      const id = assignAuditId(req);
      carryHeader(ctx, 'Audit-Id', id);
      cfg.audit.failedAuthentication(req, ctx.info, id, err instanceof Error ? err.message : String(err), ctx.receivedAt);
    }
    throw err;
  }
  const user = (ctx.user = ctx.authn.user);
  cfg.tracing?.authenticated(ctx, ctx.authn);
  if (user.username === 'system:anonymous') goAwayAfter(req, res);
  else if (cfg.goawayChance) maybeGoAway(cfg.goawayChance, req, res);
  if (req.headers.authorization !== undefined) delete req.headers.authorization;
  stripIdentityHeaders(req, cfg.identityHeaders);
}
