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
import type { AuthnResult } from '../authn/types.js';

/** A promise only when the authenticator has to wait (a cached credential takes no promise turn). */
export function authenticate(ctx: RequestContext, cfg: ChainConfig): void | Promise<void> {
  const req = ctx.req;
  const a0 = performance.now();
  let result: AuthnResult | Promise<AuthnResult>;
  try {
    // The authenticators get the authentication span's trace (a webhook's call hangs under it).
    result = ctx.trace
      ? inSpan(ctx.trace, 'authentication', {}, async (_span, t) => cfg.authenticator.authenticate(req, t))
      : cfg.authenticator.authenticate(req);
  } catch (err) {
    failed(ctx, cfg, a0, err);
  }
  if (result instanceof Promise) {
    return result.then(
      (r) => authenticated(ctx, cfg, a0, r),
      (err: unknown) => failed(ctx, cfg, a0, err),
    );
  }
  authenticated(ctx, cfg, a0, result);
}

/** Counts, audits and rethrows a failed authentication. */
function failed(ctx: RequestContext, cfg: ChainConfig, a0: number, err: unknown): never {
  const { req, res } = ctx;
  observeAuthentication(err instanceof StatusError && err.status.code === 401 ? 'failure' : 'error', (performance.now() - a0) / 1000);
  goAwayAfter(req, res);
  if (cfg.audit) {
    const id = assignAuditId(req);
    carryHeader(ctx, 'Audit-Id', id);
    cfg.audit.failedAuthentication(req, ctx.info, id, err instanceof Error ? err.message : String(err), ctx.receivedAt);
  }
  throw err;
}

function authenticated(ctx: RequestContext, cfg: ChainConfig, a0: number, result: AuthnResult): void {
  const { req, res } = ctx;
  ctx.authn = result;
  observeAuthentication('success', (performance.now() - a0) / 1000);
  const user = (ctx.user = result.user);
  cfg.tracing?.authenticated(ctx, result);
  if (user.username === 'system:anonymous') goAwayAfter(req, res);
  else if (cfg.goawayChance) maybeGoAway(cfg.goawayChance, req, res);
  if (req.headers.authorization !== undefined) delete req.headers.authorization;
  stripIdentityHeaders(req, cfg.identityHeaders);
}
