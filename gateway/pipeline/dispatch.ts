// The last step: the request, authorized, goes to whoever serves it (the
// gateway's table, the sidecar's upstream, a backend process's API). When
// the audit event keeps the request body, it is read once here and every
// destination takes ctx.body instead of reading the request again.
import { readBody } from '../../lib/http/body.js';
import type { ChainConfig } from './config.js';
import type { RequestContext } from './context.js';

export function dispatch(ctx: RequestContext, cfg: ChainConfig): void | Promise<void> {
  if (ctx.audit?.wantsRequestBody && cfg.audit) return withBody(ctx, cfg, cfg.audit.maxBodyBytes());
  return cfg.dispatch(ctx);
}

async function withBody(ctx: RequestContext, cfg: ChainConfig, max: number): Promise<void> {
  ctx.body ??= await readBody(ctx.req, max);
  ctx.audit?.requestBody(ctx.body, ctx.req.headers['content-type']);
  return cfg.dispatch(ctx);
}
