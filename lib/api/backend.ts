// What the gateway hands a backend that serves resource requests in-process.
// A backend answers successes itself (it knows encodings and streams) and
// throws StatusError for failures, which the gateway writes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KObject, UserInfo } from './meta.js';
import type { RequestInfo } from './requestinfo.js';

export interface BackendRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: URLSearchParams;
  readonly info: RequestInfo;
  /** The effective user (after impersonation). */
  readonly user: UserInfo;
  /** The body, already read by the gateway (the audit of request bodies needed it); absent = read it from `req`. */
  readonly body?: Buffer;
  /** A watch calls this once its initial events are sent (priority and fairness frees its seat). */
  readonly initialized?: () => void;
  /** Adds an annotation to the request's audit event (admission webhooks'); absent = the request is not audited. `level` Request: kept only at that audit level and above. */
  readonly annotate?: (key: string, value: string, level?: 'Request') => void;
}

export interface ApiBackend {
  serve(r: BackendRequest): Promise<void>;
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
