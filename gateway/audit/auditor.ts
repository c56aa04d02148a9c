// Records the audit events of requests: the policy decides the level and the
// stages per request, the event is filled as the request goes down the chain
// (impersonation, authorization's decision, bodies), and each stage is handed
// to every sink in its mode. Requests at level None cost one policy lookup.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { UserInfo } from '../../lib/api/meta.js';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import { internalError } from '../../lib/api/status.js';
import { auditErrors, auditEvents, auditLevel, auditRejected } from '../metrics/audit.js';
import type { AuditBackend, Mode } from './backend.js';
import { ThrottledLog } from './backend.js';
import { BatchBackend } from './batch.js';
import { microTime, objectRefOf, sourceIPs, userOf, withoutManagedFields, type AuditEvent, type ObjectReference, type ResponseStatus } from './event.js';
import type { AuditedExchange, AuditRecorder, RequestAudit } from '../pipeline/audit.js';
import { type AuditPolicy, type PolicyDecision, type Stage } from './policy.js';
import { decodeEnvelope } from '../../lib/protobuf/codec.js';
import { decodeCborObject } from '../../lib/cbor/decode.js';
import { sentHeader } from '../../lib/http/carried.js';
import { atExitHandOver } from './exit.js';
import type { Trace } from '../../lib/tracing/span.js';

export interface AuditSink {
  readonly backend: AuditBackend;
  readonly mode: Mode;
  readonly batch?: { bufferSize: number; maxSize: number; maxWaitMs: number; throttle?: { qps: number; burst: number } };
}

export interface AuditorOptions {
  policy: AuditPolicy;
  sinks: readonly AuditSink[];
  log: (msg: string) => void;
  /** Largest body kept in an event (request and response each). */
  maxBodyBytes: number;
}

interface Sender {
  process(events: readonly AuditEvent[]): void;
  receivedBlocks?(events: readonly AuditEvent[], trace: Trace | undefined): Promise<void> | undefined;
  shutdown(): Promise<void>;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const NO_GROUPS: readonly string[] = Object.freeze([]);
/** Status.metadata of every event's responseStatus (empty, as kube writes it): one object. */
const NO_METADATA: Record<string, never> = Object.freeze({});

export class Auditor implements AuditRecorder {
  private readonly senders: readonly Sender[];
  private readonly errors: ThrottledLog;

  constructor(private readonly opts: AuditorOptions) {
    this.errors = new ThrottledLog(opts.log);
    this.senders = opts.sinks.map((s) => this.senderOf(s));
    this.unregisterExit = atExitHandOver(this.drainLater);
  }

  private readonly unregisterExit: () => void;

  /** Events a plugin could not keep: counted in apiserver_audit_error_total{plugin}, logged at most once per interval. */
  lost(plugin: string, events: readonly AuditEvent[], why: string): void {
    this.failed(plugin, events, why);
  }

  private failed(plugin: string, events: readonly AuditEvent[], why: string): void {
    this.failedCount(plugin, events.length, why);
  }

  private failedCount(plugin: string, count: number, why: string): void {
    auditErrors.labels(plugin).inc(count);
    this.errors.error(`audit ${plugin} backend: ${count} event(s) lost: ${why}`);
  }

  private senderOf(s: AuditSink): Sender {
    const b = s.backend;
    if (s.mode === 'batch') {
      const batched = new BatchBackend(b, {
        ...(s.batch ?? { bufferSize: 10_000, maxSize: 400, maxWaitMs: 30_000 }),
        onError: (evs, why) => this.failed(b.plugin, evs, why),
      });
      return { process: (evs) => void batched.process(evs), shutdown: () => batched.shutdown() };
    }
    // One rejection handler per write, not per event (a promise each): the log gives every event of one write the same promise.
    let last: Promise<void> | undefined;
    let lastCount = { n: 0 };
    const send = (evs: readonly AuditEvent[]) => {
      const p = b.process(evs);
      if (p === last) {
        lastCount.n += evs.length;
        return;
      }
      const count = { n: evs.length };
      last = p;
      lastCount = count;
      p.catch((err: unknown) => this.failedCount(b.plugin, count.n, err instanceof Error ? err.message : String(err)));
    };
    const strict = s.mode === 'blocking-strict';
    // Blocking modes wait for RequestReceived to be kept before the request goes on (later stages never hold the answer).
    const receivedBlocks: Sender['receivedBlocks'] = (evs, trace) =>
      b.process(evs, true, trace).catch((err: unknown) => {
        this.failed(b.plugin, evs, err instanceof Error ? err.message : String(err));
        if (strict) throw err;
      });
    return { process: send, receivedBlocks, shutdown: () => b.shutdown() };
  }

  /** Starts the audit of a request whose user is known; undefined when the policy says None. */
  begin(x: AuditedExchange, info: RequestInfo, user: UserInfo, auditID: string, longRunning: boolean, receivedAt?: number): RequestAudit | undefined {
    const d = this.opts.policy.decide(user.username, user.groups, info);
    auditLevel(d.level).value++;
    if (d.level === 'None') return undefined;
    return new Recording(this, d, x, info, user, auditID, longRunning, receivedAt);
  }

  /** A request whose credentials failed: one ResponseStarted event, as kube's failed-authentication audit. */
  failedAuthentication(req: IncomingMessage, info: RequestInfo, auditID: string, message: string, receivedAt?: number): void {
    const d = this.opts.policy.decide('', NO_GROUPS, info);
    if (d.level === 'None' || d.omitStages.has('ResponseStarted')) return;
    const ev = baseEvent(d, req, info, { username: '', groups: [] }, auditID, microTime(receivedAt));
    ev.stageTimestamp = microTime();
    ev.stage = 'ResponseStarted';
    ev.responseStatus = { metadata: {}, status: 'Failure', message, reason: 'Unauthorized', code: 401 };
    this.emit(ev, 'ResponseStarted');
  }

  /** Hands a stage's event to every sink; a promise when one blocks on RequestReceived (a call in the request's `trace`). */
  emit(ev: AuditEvent, stage: Stage, trace?: Trace): Promise<void> | undefined {
    auditEvents.value++;
    let wait: Promise<void>[] | undefined;
    for (const s of this.senders) {
      const p = stage === 'RequestReceived' && s.receivedBlocks ? s.receivedBlocks([ev], trace) : (s.process([ev]), undefined);
      if (p) (wait ??= []).push(p);
    }
    if (!wait) return undefined;
    return (wait.length === 1 ? wait[0]! : Promise.all(wait)).then(
      () => undefined,
      (err: unknown) => {
        auditRejected.inc();
        throw internalError(`audit: the event could not be recorded: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
  }

  maxBodyBytes(): number {
    return this.opts.maxBodyBytes;
  }

  /**
   * A finished request's last event, handed to the sinks once this turn's
   * answers are written (see `complete`); the events of one turn go together.
   */
  emitLater(ev: AuditEvent): void {
    if (this.later.push(ev) === 1) setImmediate(this.drainLater);
  }

  private later: AuditEvent[] = [];

  private readonly drainLater = (): void => {
    const events = this.later;
    if (events.length === 0) return;
    this.later = [];
    auditEvents.value += events.length;
    for (const s of this.senders) s.process(events);
  };

  async shutdown(): Promise<void> {
    this.drainLater();
    this.unregisterExit();
    await Promise.all(this.senders.map((s) => s.shutdown().catch(() => undefined)));
  }
}

/** kube's LogRequestObject: what objectRef lacks (name, namespace, uid, resourceVersion) from the object's own metadata. */
function fillRefFromObject(ref: ObjectReference, obj: unknown): ObjectReference {
  const meta = obj !== null && typeof obj === 'object' && Object.hasOwn(obj, 'metadata') ? (obj as { metadata: unknown }).metadata : undefined;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return ref;
  const own = (k: string): string => {
    const v = Object.hasOwn(meta, k) ? (meta as Record<string, unknown>)[k] : undefined;
    return typeof v === 'string' ? v : '';
  };
  if (!ref.namespace && own('namespace')) ref.namespace = own('namespace');
  if (!ref.name && own('name')) ref.name = own('name');
  if (!ref.uid && own('uid')) ref.uid = own('uid');
  if (!ref.resourceVersion && own('resourceVersion')) ref.resourceVersion = own('resourceVersion');
  return ref;
}

function baseEvent(d: PolicyDecision, req: IncomingMessage, info: RequestInfo, user: UserInfo, auditID: string, now: string): AuditEvent {
  const ev: AuditEvent = {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: d.level,
    auditID,
    stage: 'RequestReceived',
    requestURI: req.url ?? '/',
    verb: info.verb,
    user: userOf(user),
    sourceIPs: sourceIPs(req),
    requestReceivedTimestamp: now,
    stageTimestamp: now,
  };
  const ua = req.headers['user-agent'];
  if (typeof ua === 'string') ev.userAgent = ua;
  const ref = objectRefOf(info);
  if (ref) ev.objectRef = ref;
  return ev;
}

class Recording implements RequestAudit {
  private readonly ev: AuditEvent;
  /**
   * A plain object: its keys are the gateway's own names (RequestAudit.annotate), never a client's, and
   * set in the same order request after request they keep one shape (a null-prototype object is a
   * dictionary, slower to fill and to list when the line is written).
   */
  private readonly annotations: Record<string, string> = {};
  private readonly res: ServerResponse;
  private chunks: Buffer[] | undefined;
  private kept = 0;
  private annotated = false;
  private started = false;
  private done = false;
  readonly wantsRequestBody: boolean;
  readonly requestLevel: boolean;

  constructor(
    private readonly auditor: Auditor,
    private readonly d: PolicyDecision,
    private readonly x: AuditedExchange,
    info: RequestInfo,
    user: UserInfo,
    auditID: string,
    private readonly longRunning: boolean,
    receivedAt?: number,
  ) {
    const req = x.req;
    this.res = x.res;
    this.ev = baseEvent(d, req, info, user, auditID, microTime(receivedAt));
    this.requestLevel = d.keepsRequestBody;
    this.wantsRequestBody = d.keepsRequestBody && BODY_METHODS.has(req.method ?? '') && req.headers['content-length'] !== '0';
    const wantsResponse = d.keepsResponseBody && !longRunning;
    // The answer is recorded as written; a compressed one could not be read back.
    if (wantsResponse) delete req.headers['accept-encoding'];
    if (!longRunning) this.captureResponse(wantsResponse);
    else this.watchStart();
  }

  private snapshot(stage: Stage, at = microTime()): AuditEvent {
    // The last stage's event is the recording itself, as nothing changes it afterwards: no copy per request.
    const final = stage === 'ResponseComplete' || stage === 'Panic';
    const ev = final ? this.ev : { ...this.ev };
    ev.stage = stage;
    ev.stageTimestamp = at;
    if (this.annotated) ev.annotations = final ? this.annotations : { ...this.annotations };
    return ev;
  }

  private emit(stage: Stage, trace?: Trace): Promise<void> | undefined {
    if (this.d.omitStages.has(stage)) return undefined;
    return this.auditor.emit(this.snapshot(stage), stage, trace);
  }

  received(): Promise<void> | undefined {
    return this.emit('RequestReceived', this.x.trace);
  }

  impersonated(user: UserInfo): void {
    this.ev.impersonatedUser = userOf(user);
  }

  annotate(key: string, value: string): void {
    this.annotations[key] = value;
    this.annotated = true;
  }

  requestBody(body: Buffer, contentType: string | undefined): void {
    const obj = decode(body, contentType);
    if (obj === undefined) return;
    this.ev.requestObject = this.d.omitManagedFields ? withoutManagedFields(obj) : obj;
    // A proxied create names its object in the body too.
    this.requestObject(obj);
  }

  requestObject(obj: unknown): void {
    // A copy: an earlier stage's event, maybe not yet written, shares the reference.
    if (this.ev.objectRef) this.ev.objectRef = fillRefFromObject({ ...this.ev.objectRef }, obj);
  }

  /**
   * Keeps what the response writes: the whole answer at RequestResponse, an
   * error's Status at the other levels. There, the writer is wrapped only once
   * an error's head is written (wrapping every answer's write and end cost a
   * Metadata-audited GET more than its event).
   */
  private captureResponse(all: boolean): void {
    if (all) this.wrapWrites(true);
    else this.x.headHook = this;
  }

  /** The head is about to be written (lib/http/carried.ts): an error's Status is kept. */
  beforeHead(code: number): void {
    if (code >= 400) this.wrapWrites(false);
  }

  private wrapWrites(all: boolean): void {
    const res = this.res;
    const max = this.auditor.maxBodyBytes();
    const take = (chunk: unknown, encoding: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      if (!all && res.statusCode < 400) return;
      const enc = typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8';
      const length = typeof chunk === 'string' ? Buffer.byteLength(chunk, enc) : (chunk as Uint8Array).byteLength;
      if (this.kept + length > max) {
        this.kept = Infinity;
        return;
      }
      this.kept += length;
      // Copied: a writer may reuse its buffer once the write's callback ran (lib/http/parts.ts pools list chunks).
      (this.chunks ??= []).push(typeof chunk === 'string' ? Buffer.from(chunk, enc) : Buffer.from(chunk as Uint8Array));
    };
    const write = res.write;
    const end = res.end;
    // Own properties on this response only: the prototype's methods stay untouched.
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      take(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      take(chunk, rest[0]);
      return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as typeof res.end;
  }

  /** Long-running requests: ResponseStarted when the answer's headers go out. */
  private watchStart(): void {
    const res = this.res;
    const mark = () => {
      if (!this.started) {
        this.started = true;
        void this.emit('ResponseStarted');
      }
    };
    const writeHead = res.writeHead;
    const write = res.write;
    res.writeHead = function (this: ServerResponse, ...a: unknown[]) {
      mark();
      return (writeHead as (...x: unknown[]) => ServerResponse).apply(this, a);
    } as typeof res.writeHead;
    res.write = function (this: ServerResponse, ...a: unknown[]) {
      mark();
      return (write as (...x: unknown[]) => boolean).apply(this, a);
    } as typeof res.write;
  }

  private responseStatus(code: number): ResponseStatus {
    const status: ResponseStatus = { metadata: NO_METADATA, code };
    const chunks = this.chunks;
    if (chunks === undefined || this.kept === Infinity || sentHeader(this.x, 'content-encoding') !== undefined) return status;
    const parsed = decode(Buffer.concat(chunks), String(sentHeader(this.x, 'content-type') ?? ''));
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const o = parsed as Record<string, unknown>;
      if (o['kind'] === 'Status') {
        for (const k of ['status', 'message', 'reason'] as const) if (typeof o[k] === 'string' && o[k] !== '') status[k] = o[k] as string;
        if (o['details'] !== undefined) status.details = o['details'];
      }
      if (this.d.keepsResponseBody) this.ev.responseObject = this.d.omitManagedFields ? withoutManagedFields(o) : o;
    }
    return status;
  }

  complete(code: number, at?: number): void {
    if (this.done) return;
    this.done = true;
    if (this.longRunning && !this.started && code < 400) {
      this.started = true;
      void this.emit('ResponseStarted');
    }
    this.ev.responseStatus = this.responseStatus(code);
    if (this.d.omitStages.has('ResponseComplete')) return;
    // Called as the answer is handed to the socket, between the answers of one turn (lib/http/turnend.ts):
    // the event is made and written once they are all out. Its time is now.
    this.auditor.emitLater(this.snapshot('ResponseComplete', microTime(at)));
  }

  panic(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.ev.responseStatus = {
      metadata: {},
      status: 'Failure',
      message: `APIServer panic'd: ${err instanceof Error ? err.message : String(err)}`,
      reason: 'InternalError',
      code: 500,
    };
    void this.emit('Panic');
  }
}

function decode(body: Buffer, contentType: string | undefined): unknown {
  const ct = (contentType ?? '').toLowerCase();
  try {
    if (ct.includes('json')) return JSON.parse(body.toString('utf8'));
    if (ct.includes('yaml')) return parseYaml(body.toString('utf8'), { maxAliasCount: 100 });
    // kube audits the object, whatever the wire format: protobuf and CBOR bodies are written in their JSON form.
    if (ct.includes('protobuf')) return decodeEnvelope(body).object;
    if (ct.includes('cbor')) return decodeCborObject(body);
  } catch {
    return undefined;
  }
  return undefined;
}
