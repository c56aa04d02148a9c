// The request pipeline in kube-apiserver's order (its DefaultBuildHandlerChain):
// request info → drain check → deadline → authentication → audit →
// impersonation → seat (in-flight limit or priority and fairness) →
// authorization → dispatch (admission runs in the core backend's write path). Each step is a module of this folder
// that takes the request's context and returns, or throws a StatusError that
// is answered here; a step returns a promise only when it has to wait, so a
// request that waits on nothing takes no promise turn for it. With tracing
// (gateway/tracing) the request's server span begins before the chain and its
// trace travels on the context; without it each traced step costs one check.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { newExchange } from '../../lib/http/exchange.js';
import { openAudit } from './audit.js';
import { authenticate } from './authentication.js';
import { authorize } from './authorization.js';
import type { ChainConfig } from './config.js';
import { isLongRunning, newContext, releaseQuery, type PendingUpgrade, type RequestContext } from './context.js';
import { armDeadline, startDeadline } from './deadline.js';
import { dispatch } from './dispatch.js';
import { refuseWhileDraining } from './draining.js';
import { answerFailure } from './erroranswer.js';
import { finishRequest } from './finish.js';
import { srcIpOf } from './httplog.js';
import { impersonation } from './impersonate.js';
import { takeSeat } from './seat.js';

export type { ChainConfig, RequestAuthenticator } from './config.js';

/** Serves one request; `upgrade` is given for an upgrade request, whose `res` is bound to that socket. */
export type ChainHandler = (req: IncomingMessage, res: ServerResponse, upgrade?: PendingUpgrade) => void;

/** The steps after the drain check and the deadline, in order (`step`'s cases). */
const AUTHENTICATE = 0;
const AUDIT = 1;
const IMPERSONATE = 2;
const SEAT = 3;
const AUTHORIZE = 4;
const DISPATCH = 5;

/** One step of the chain: a promise only when it has to wait. */
function step(n: number, ctx: RequestContext, cfg: ChainConfig): void | Promise<unknown> {
  switch (n) {
    case AUTHENTICATE:
      return authenticate(ctx, cfg);
    case AUDIT:
      return openAudit(ctx, cfg.audit);
    case IMPERSONATE:
      return impersonation(ctx, cfg.impersonation, cfg.authorizer);
    case SEAT:
      return takeSeat(ctx, cfg);
    case AUTHORIZE:
      return authorize(ctx, cfg);
    default:
      return dispatch(ctx, cfg);
  }
}

/**
 * Serves the request: a promise only once a step has to wait, the steps after it then run when it
 * is done. A request no step waits for (a GET from memory) makes no async function's promise, no
 * catch handler and no microtask for the chain; a step's throw reaches the caller at once.
 */
function serve(ctx: RequestContext, cfg: ChainConfig): void | Promise<void> {
  refuseWhileDraining(ctx, cfg.draining);
  armDeadline(ctx, cfg.requestTimeoutMs);
  return stepsFrom(AUTHENTICATE, ctx, cfg, cfg.cbor === true);
}

function stepsFrom(from: number, ctx: RequestContext, cfg: ChainConfig, cbor: boolean): void | Promise<void> {
  for (let n = from; n <= DISPATCH; n++) {
    const p = step(n, ctx, cfg);
    if (!p) continue;
    // The last step's promise is the chain's own when nothing follows it (`ended` acts on a watch alone): a proxied
    // GET makes no async function, its promise and its await's turn (~0.3 KB; 2026-11-30-proxied-get-bytes.md).
    if (n === DISPATCH && ctx.info.verb !== 'watch') return waiting(ctx, cbor, p) as Promise<void>;
    return afterWait(n, waiting(ctx, cbor, p), ctx, cfg, cbor);
  }
  // An answer still on its way (an asynchronous gzip) is bound by the deadline too.
  if (!ctx.res.headersSent) startDeadline(ctx, cbor);
  ended(ctx);
}

async function afterWait(n: number, p: Promise<unknown>, ctx: RequestContext, cfg: ChainConfig, cbor: boolean): Promise<void> {
  await p;
  if (n < DISPATCH) return stepsFrom(n + 1, ctx, cfg, cbor);
  ended(ctx);
}

/** The chain is through: a watch's backend has read its query (it resolves once the watch follows the store); the end reads only dryRun. */
function ended(ctx: RequestContext): void {
  if (ctx.info.verb === 'watch' && !ctx.finished) releaseQuery(ctx);
}

/** A step has to wait: the deadline's timer starts (a request that never waits sets none). */
function waiting<T>(ctx: RequestContext, cbor: boolean, p: Promise<T>): Promise<T> {
  startDeadline(ctx, cbor);
  return p;
}

export function buildHandlerChain(cfg: ChainConfig): ChainHandler {
  const tracing = cfg.tracing;
  const cbor = cfg.cbor === true;
  const compress = cfg.compression !== false;
  const httpLog = cfg.httpLog;
  return (req: IncomingMessage, res: ServerResponse, upgrade?: PendingUpgrade): void => {
    const receivedAt = performance.now();
    const traced = tracing ? tracing.begin(req, res) : undefined;
    let ctx: RequestContext;
    try {
      // Throws 400 for a path that authorization and a backend could read differently.
      ctx = newContext(req, res, cfg.clock(), receivedAt, compress, traced, upgrade);
    } catch (err) {
      answerFailure(newExchange(req, res, compress), undefined, err, cbor, cfg.log);
      return;
    }
    if (tracing) tracing.named(ctx, ctx.info);
    const inFlight = cfg.inFlight !== undefined && !isLongRunning(ctx) ? cfg.inFlight : undefined;
    inFlight?.add();
    const srcIP = httpLog ? srcIpOf(req) : '';
    const finish =
      inFlight || httpLog
        ? () => {
            const at = finishRequest(ctx);
            if (at === undefined) return;
            inFlight?.done();
            httpLog?.(ctx, at, srcIP);
          }
        : () => void finishRequest(ctx);
    // Done once the answer is handed to the socket ('prefinish', inside end(): the seat is free
    // before the client can read the answer and send its next request, which 'finish', after
    // the write completes, does not guarantee); 'finish' and 'close' for the other paths.
    // on(), not once(): finishRequest runs once by itself (ctx.finished), and each once() wrapper
    // is ~110 B an open watch holds for its life (bench/watch-heap.ts).
    res.on('prefinish', finish);
    // HTTP/2's compatibility response has no 'prefinish'; on HTTP/1.1 every 'finish' follows one, and
    // Node's own 'finish' listener then stays single (no listener array made and copied per request).
    if (req.httpVersionMajor === 2) res.on('finish', finish);
    res.on('close', finish);
    let served: void | Promise<void>;
    try {
      served = serve(ctx, cfg);
    } catch (err) {
      answerFailure(ctx, ctx, err, cbor, cfg.log);
      return;
    }
    if (served) served.catch((err: unknown) => answerFailure(ctx, ctx, err, cbor, cfg.log));
  };
}
