// Per-request state, created once at the edge and passed down the chain.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { BackendRequest } from '../../lib/api/backend.js';
import type { UserInfo } from '../../lib/api/meta.js';
import { parseRequestInfo, type RequestInfo } from '../../lib/api/requestinfo.js';
import { checkedRequestPath } from '../../lib/api/requestpath.js';
import { queryBool } from '../../lib/api/querybool.js';
import { isLongRunningVerb } from '../../lib/api/verbs.js';
import type { HeadArg, HeadHook } from '../../lib/http/carried.js';
import type { WarningRecorder } from '../../lib/http/warnings.js';
import type { PendingTrace, Trace } from '../../lib/tracing/span.js';
import type { AuthnResult } from '../authn/types.js';
import type { Labels } from '../metrics/requests.js';
import type { RequestAudit } from './audit.js';
import { Deadline } from './deadline.js';
import type { Seat } from './seat.js';

/**
 * An upgrade request (Connection: Upgrade) arrives with its socket instead of
 * a response; the server runs it through the chain with a response bound to
 * that socket, and only dispatch (after authorization) may hand the socket on.
 */
export interface PendingUpgrade {
  readonly socket: Duplex;
  readonly head: Buffer;
}

/**
 * Everything a request carries, typed, from the edge to whoever answers:
 * the core backend and the writers of lib/http get the context itself (it
 * is a BackendRequest, hence an Exchange), so nothing is kept on `req` or
 * `res` beside it.
 */
export interface RequestContext extends BackendRequest {
  readonly startedAt: number;
  /** performance.now() when the chain took the request: its duration's start, kube's requestReceivedTimestamp. */
  readonly receivedAt: number;
  /** What authentication accepted (the method and issuer go to the audit event). */
  authn: AuthnResult | undefined;
  /** The effective user: the authenticated one, or the impersonated one. */
  user: UserInfo;
  /** The request's audit recording, when the audit policy records it. */
  audit?: RequestAudit;
  /** The request body, when a step before dispatch had to read it (the audit of a Request-level policy); the backend then reads no more. */
  body?: Buffer | undefined;
  /** The recorded request's trace: its server span (or, while authentication runs, that phase's span); undefined when not recorded. */
  trace: Trace | undefined;
  /** A request that sent a trace context, waiting for its caller to be known before its span starts (gateway/tracing). */
  pendingTrace: PendingTrace | undefined;
  /** Writable for `releaseQuery` only. */
  query: URLSearchParams;
  carried: string[] | undefined;
  sent: HeadArg | undefined;
  headHook: HeadHook | undefined;
  warnings: WarningRecorder | undefined;
  /** Set for an upgrade request: the client's socket, for dispatch to forward once authorized. */
  readonly upgrade: PendingUpgrade | undefined;
  /** The request's deadline (never passes for long-running requests): what dispatch and priority-and-fairness queues wait on (pipeline/deadline.ts). */
  readonly cancel: Deadline;
  /** The request's place under the concurrency limit (pipeline/seat.ts), while it holds one. */
  seat: Seat | undefined;
  /** Watches, and upgrades (exec, attach, port-forward, websockets) once forwarded: read through `isLongRunning`. */
  readonly longRunningRequest: boolean;
  /** The series a long-running request that started is counted under in apiserver_longrunning_requests, until it ends. */
  longRunning: Labels | undefined;
  /** True once the answer is handed to the socket or the client went: what is taken after that is given back at once. */
  finished: boolean;
  /** What dispatch waits on (an APIService), named in the 504 answered at the deadline. */
  waitingOn?: string;
  /** The request's deadline in milliseconds from its start (absent for long-running requests): priority and fairness waits a quarter of it at most. */
  timeoutMs?: number;
  /**
   * Set for a watch holding a priority-and-fairness seat: called once its
   * initial events (or its empty initial state) are on their way, or, for a
   * proxied watch, once the backend's response headers arrive; the seat is
   * free from then on (kube: watches count while they initialize, then not).
   */
  watchInitialized?: (() => void) | undefined;
  /** Milliseconds waited on others (admission webhooks, a priority-and-fairness queue): left out of the SLI latency, as kube's. */
  excludedMs: number;
  /** The server ended the request in self-defense (a concurrency limit's 429, the deadline's 504): kube's apiserver_request_terminations_total. */
  terminated: boolean;
  /** True while the request waits in a priority level's queue: its deadline then answers 429, not 504 (the queue does). */
  queued?: boolean;
}

/**
 * The query of a request that has none: its reads answer at once. URLSearchParams' get and has check the
 * receiver's brand and make the name well-formed before looking at an empty list, ~0.1k instructions a read,
 * and a GET reads five (watch, timeout, resourceVersion, pretty, dryRun). Nothing changes a request's query.
 */
class EmptyQuery extends URLSearchParams {
  override get(): string | null {
    return null;
  }
  override getAll(): string[] {
    return [];
  }
  override has(): boolean {
    return false;
  }
}
const EMPTY_QUERY: URLSearchParams = new EmptyQuery();
/** What the request's end reads of a query (the request metrics' dry_run label: the parameter's presence). */
const DRY_RUN_QUERY = new URLSearchParams('dryRun=All');
const NOBODY: UserInfo = Object.freeze({ username: '', groups: [] });

/**
 * Throws a 400 StatusError for a path that could mean different things to authorization and a backend.
 * `compress`: the APIResponseCompression gate; `traced`: what the tracing step began (gateway/tracing).
 */
export function newContext(
  req: IncomingMessage,
  res: ServerResponse,
  now: number,
  receivedAt: number,
  compress: boolean,
  traced: Trace | PendingTrace | undefined,
  upgrade?: PendingUpgrade,
): RequestContext {
  const url = req.url ?? '/';
  const method = req.method ?? 'GET';
  const q = url.indexOf('?');
  const query = q < 0 ? EMPTY_QUERY : new URLSearchParams(url.slice(q + 1));
  const info = targetInfo(url, method, q, query);
  // Every field from the start: one object shape for every request.
  return {
    req,
    res,
    query,
    info,
    startedAt: now,
    receivedAt,
    authn: undefined,
    user: NOBODY,
    audit: undefined,
    body: undefined,
    upgrade,
    cancel: new Deadline(),
    waitingOn: undefined,
    timeoutMs: undefined,
    watchInitialized: undefined,
    queued: undefined,
    excludedMs: 0,
    terminated: false,
    seat: undefined,
    // Read by five steps of every request: the headers getter and a hash lookup once, not each time.
    longRunningRequest: isLongRunningVerb(info.verb) || req.headers.upgrade !== undefined,
    longRunning: undefined,
    finished: false,
    trace: traced !== undefined && !isPending(traced) ? traced : undefined,
    pendingTrace: traced !== undefined && isPending(traced) ? traced : undefined,
    carried: undefined,
    sent: undefined,
    headHook: undefined,
    warnings: undefined,
    compress,
    unrouted: false,
  };
}

/**
 * For a watch being served, once its backend has parsed the request: the query goes, but for what the
 * request's end still reads of it. Why: an open watch keeps its context for its life, and the parsed
 * query (~260 B for `?watch=1`, more with a real client's parameters) is of no more use.
 */
export function releaseQuery(ctx: RequestContext): void {
  if (ctx.query !== EMPTY_QUERY) ctx.query = ctx.query.has('dryRun') ? DRY_RUN_QUERY : EMPTY_QUERY;
}

/** Request targets kept with what they parse to; past it the memo starts over (a client chooses its targets). */
const TARGETS_MAX = 512;
/** Targets longer than this are parsed every time (and not kept). */
const TARGET_MAX_LENGTH = 512;

interface ParsedTarget {
  readonly method: string;
  readonly info: RequestInfo;
}

/**
 * A keep-alive client repeats its targets (a controller its GETs and watches, kubectl its few paths), and what a
 * target parses to depends on it and the method alone: the checked path, the query's watch flag and the request
 * info (~5k instructions a proxied GET under callgrind: the path's regex and segment scans, the segments and their
 * slices) are kept per target, a Map lookup of the target string then. A target that is refused (400) is never kept.
 * The requests of one target share its info (nothing writes a RequestInfo).
 */
const targets = new Map<string, ParsedTarget>();

function targetInfo(url: string, method: string, q: number, query: URLSearchParams): RequestInfo {
  const kept = url.length <= TARGET_MAX_LENGTH ? targets.get(url) : undefined;
  if (kept !== undefined && kept.method === method) return kept.info;
  const watch = queryBool(query, 'watch') ?? false;
  // Refused (400) unless the raw path a backend receives and the decoded one authorization reads name the same thing.
  const path = checkedRequestPath(q < 0 ? url : url.slice(0, q));
  const info = parseRequestInfo(method, path, watch);
  if (url.length <= TARGET_MAX_LENGTH) {
    if (targets.size >= TARGETS_MAX && kept === undefined) targets.clear();
    targets.set(url, { method, info });
  }
  return info;
}

function isPending(t: Trace | PendingTrace): t is PendingTrace {
  return (t as PendingTrace).pending === true;
}

export function isLongRunning(ctx: RequestContext): boolean {
  return ctx.longRunningRequest;
}
