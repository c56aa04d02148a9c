// One request's answer side: what the writers of lib/http need beside `req`
// and `res`, as typed members instead of state hung on the response. The
// gateway's RequestContext is an Exchange (its fields are set when the
// context is made, so no object is added per request); code answering
// outside a request chain makes one with `newExchange`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HeadArg, HeadHook } from './carried.js';
import type { WarningRecorder } from './warnings.js';

export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Headers decided before anyone answers (Audit-Id, APF's), name and value in turn: `writeHeadWith` adds them. */
  carried: string[] | undefined;
  /** The headers `writeHeadWith` wrote, read back by `sentHeader` (nothing is set with setHeader on the hot path). */
  sent: HeadArg | undefined;
  /** Told the status code just before the head is written (the audit's error capture). */
  headHook: HeadHook | undefined;
  /** The `Warning` headers added so far (`addWarnings`), made on the first one. */
  warnings: WarningRecorder | undefined;
  /** False on a server with the APIResponseCompression gate off: the answer is never gzipped. */
  readonly compress: boolean;
  /** Set by `sendError` when no route served the path (an unrouted StatusError): the request metrics leave the path's parts out. */
  unrouted: boolean;
}

/** An exchange for an answer written outside a request chain (a test, a bare server). */
export function newExchange(req: IncomingMessage, res: ServerResponse, compress = true): Exchange {
  return { req, res, carried: undefined, sent: undefined, headHook: undefined, warnings: undefined, compress, unrouted: false };
}
