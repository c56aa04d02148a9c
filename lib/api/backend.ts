// What the gateway hands a backend that serves resource requests in-process.
// A backend answers successes itself (it knows encodings and streams) and
// throws StatusError for failures, which the gateway writes.
import type { Exchange } from '../http/exchange.js';
import type { Trace } from '../tracing/span.js';
import type { KObject, UserInfo } from './meta.js';
import type { RequestInfo } from './requestinfo.js';

/**
 * The gateway's RequestContext is one (handed over as it is: no object made
 * per request); its Exchange members carry the headers and warnings the
 * answer gets, whoever writes it.
 */
export interface BackendRequest extends Exchange {
  readonly query: URLSearchParams;
  readonly info: RequestInfo;
  /** The effective user (after impersonation). */
  readonly user: UserInfo;
  /** The body, already read by the gateway (the audit of request bodies needed it); absent = read it from `req`. */
  readonly body?: Buffer | undefined;
  /** A watch calls this once its initial events are sent (priority and fairness frees its seat). */
  readonly watchInitialized?: (() => void) | undefined;
  /** The recorded request's trace (its store calls and outbound calls hang under it); undefined when not recorded. */
  readonly trace: Trace | undefined;
  /** The request's audit event, when the audit policy records it: admission adds its annotations (webhooks', policies'). */
  readonly audit?: AuditAnnotations | undefined;
  /** Milliseconds the request waited on admission webhooks (and queues): what kube's SLI latency leaves out; admission adds to it. */
  excludedMs?: number;
}

/** Where a backend adds annotations to the request's audit event; keys are namespaced (`<name>/<key>`), never a bare client key. */
export interface AuditAnnotations {
  annotate(key: string, value: string): void;
  /** The event is recorded at level Request or above (annotations of that level are kept only then). */
  readonly requestLevel: boolean;
  /**
   * The decoded request object (kube's LogRequestObject, at every level): the event's objectRef takes the
   * name, namespace, uid and resourceVersion it lacks from the object's metadata.
   */
  requestObject(obj: KObject): void;
}

export interface ApiBackend {
  serve(r: BackendRequest): Promise<void>;
  /**
   * serve() with the chain's rule (gateway/pipeline/chain.ts): a promise only when the request has to
   * wait, and a failure found before that thrown. The gateway's dispatch calls it when offered.
   */
  serveNow?(r: BackendRequest): void | Promise<void>;
  /** Serves this group/version? (dispatch asks before calling serve). */
  serves(group: string, version: string): boolean;
}

/**
 * Admission of a create answered without a store (the reviews the gateway
 * serves), as kube's create handler admits a REST creater's create: mutating
 * admission on the decoded object, then (after the type's own validation)
 * validating admission. Both throw the refusal's StatusError.
 */
export interface CreateAdmission {
  /** The object to continue with (the same one when nothing changed it). */
  mutate(r: BackendRequest, object: KObject): Promise<KObject>;
  validate(r: BackendRequest, object: KObject): Promise<void>;
}
