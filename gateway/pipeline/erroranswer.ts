// How the chain answers a failed step: the StatusError in the encoding the
// client accepts (YAML for YAML clients, protobuf on resource paths, where
// Status has a protobuf form), JSON otherwise; a 406 always in JSON, as
// kube-apiserver writes it when negotiation itself failed.
import type { IncomingMessage } from 'node:http';
import { StatusError, toStatusError } from '../../lib/api/status.js';
import { negotiateOutput, RESOURCE_AS, type Output } from '../../lib/http/negotiate.js';
import type { Exchange } from '../../lib/http/exchange.js';
import { sendError } from '../../lib/http/respond.js';
import type { RequestContext } from './context.js';

function errorOutput(req: IncomingMessage, status: StatusError, resource: boolean, cbor: boolean): Output | undefined {
  if (status.code === 406) return undefined;
  try {
    return negotiateOutput(req.headers.accept, RESOURCE_AS, { protobuf: resource, cbor: resource && cbor });
  } catch {
    return undefined;
  }
}

/** Answers `status` (`cbor`: the CBORServingAndStorage gate). */
export function answerError(ctx: RequestContext, status: StatusError, cbor: boolean): void {
  sendError(ctx, status, errorOutput(ctx.req, status, ctx.info.isResourceRequest, cbor));
}

/** A step threw: its StatusError goes out; anything else is the server's fault (500), logged and marked in the audit event. */
/** `x`: the request's context, or a plain exchange when none could be made (`ctx` undefined). */
export function answerFailure(x: Exchange, ctx: RequestContext | undefined, err: unknown, cbor: boolean, log: (msg: string) => void): void {
  const req = x.req;
  const status = toStatusError(err);
  if (!(err instanceof StatusError)) {
    ctx?.audit?.panic(err);
    log(`internal error serving ${req.method} ${req.url}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
  sendError(x, status, errorOutput(req, status, ctx?.info.isResourceRequest === true, cbor));
}
