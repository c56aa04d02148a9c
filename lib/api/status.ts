// Kubernetes `Status` errors. Every failure a client sees is built by one of
// these helpers and converted to JSON once, at the edge (see toStatus).
import { metaV1 } from '../schema/gen/meta-v1.js';
import type { TypeDef } from '../schema/types.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'ServerTimeout';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A resource named by group and plural, as Kubernetes messages name it (`pods`, `deployments.apps`). */
export interface GroupResource {
  group: string;
  resource: string;
}
export interface GroupKind {
  group: string;
  kind: string;
}

export function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

export class StatusError extends Error {
  readonly status: Status;
  /** Extra response headers (Retry-After). */
  readonly headers: Record<string, string>;
  /** No route serves the path (kube's not-found handler): the request's metrics then carry none of the path's parts, which the client chose. */
  unrouted = false;
  constructor(code: number, reason: StatusReason | undefined, message: string, details?: StatusDetails, headers: Record<string, string> = {}) {
    super(message);
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      ...(reason ? { reason } : {}),
      ...(details ? { details: asWritten(DETAILS, details) as StatusDetails } : {}),
      code,
    };
    this.headers = headers;
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

/**
 * A struct's members as Go's encoding/json writes them, by the meta/v1 table:
 * in the type's field order, an empty member (`""`, 0, false, none, an empty
 * list) left out unless the type writes it when empty (TypeDef.z). So
 * `details` carries no `"group":""` for the core group, as kube's does not.
 */
function asWritten(def: WrittenDef, value: object): object {
  const out: Record<string, unknown> = {};
  const v = value as Record<string, unknown>;
  for (const [k, inner] of def.fields) {
    if (!Object.hasOwn(v, k)) continue;
    const x = v[k];
    if (isEmpty(x) && !def.writtenEmpty.has(k)) continue;
    out[k] = inner && Array.isArray(x) ? x.map((item: object) => asWritten(inner, item)) : x;
  }
  return out;
}

interface WrittenDef {
  readonly fields: ReadonlyArray<readonly [string, WrittenDef | undefined]>;
  readonly writtenEmpty: ReadonlySet<string>;
}

function writtenDef(t: TypeDef, inner: Readonly<Record<string, WrittenDef>> = {}): WrittenDef {
  return { fields: Object.keys(t.f).map((k) => [k, inner[k]] as const), writtenEmpty: new Set(Object.keys(t.z ?? {})) };
}

const DETAILS = writtenDef(metaV1.types['StatusDetails']!, { causes: writtenDef(metaV1.types['StatusCause']!) });

function isEmpty(x: unknown): boolean {
  return x === undefined || x === null || x === '' || x === 0 || x === false || (Array.isArray(x) && x.length === 0);
}

export function badRequest(message: string, causes?: StatusCause[]): StatusError {
  return new StatusError(400, 'BadRequest', message, causes ? { causes } : undefined);
}

export function unauthorized(message = 'Unauthorized'): StatusError {
  return new StatusError(401, 'Unauthorized', message);
}

export function forbidden(gr: GroupResource, name: string, why: string): StatusError {
  const what = name ? `${qualified(gr)} "${name}"` : qualified(gr);
  return new StatusError(403, 'Forbidden', `${what} is forbidden: ${why}`, { name, group: gr.group, kind: gr.resource });
}

export function forbiddenMessage(message: string, details?: StatusDetails): StatusError {
  return new StatusError(403, 'Forbidden', message, details);
}

export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, { name, group: gr.group, kind: gr.resource });
}

export function pathNotFound(message = 'the server could not find the requested resource'): StatusError {
  const err = new StatusError(404, 'NotFound', message, {});
  err.unrouted = true;
  return err;
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, { name, group: gr.group, kind: gr.resource });
}

export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, { name, group: gr.group, kind: gr.resource });
}

export const STALE_OBJECT = 'the object has been modified; please apply your changes to the latest version and try again';

export function gone(message: string): StatusError {
  return new StatusError(410, 'Gone', message);
}

/** 410 for versions that were compacted away; client-go re-lists on reason Expired. */
export function expired(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

/** A field-level validation failure (422), as apimachinery's field.ErrorList renders it. */
export function invalid(gk: GroupKind, name: string, causes: StatusCause[]): StatusError {
  const list = causes.map((c) => (c.message ? `${c.field}: ${c.message}` : String(c.field))).join(', ');
  const summary = causes.length === 1 ? list : `[${list}]`;
  return new StatusError(422, 'Invalid', `${gk.group ? `${gk.kind}.${gk.group}` : gk.kind} "${name}" is invalid: ${summary}`, {
    name,
    group: gk.group,
    kind: gk.kind,
    causes,
  });
}

/** Builds causes in apimachinery's wording: `Invalid value: "x": why`, `Required value`, `Forbidden: why`. */
export const cause = {
  required(field: string, detail = ''): StatusCause {
    return { reason: 'FieldValueRequired', field, message: detail ? `Required value: ${detail}` : 'Required value' };
  },
  invalid(field: string, value: unknown, detail: string): StatusCause {
    return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${detail}` };
  },
  forbidden(field: string, detail: string): StatusCause {
    return { reason: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` };
  },
  notSupported(field: string, value: unknown, allowed: readonly string[]): StatusCause {
    return {
      reason: 'FieldValueNotSupported',
      field,
      message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`,
    };
  },
  duplicate(field: string, value: unknown): StatusCause {
    return { reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${JSON.stringify(value)}` };
  },
  typeInvalid(field: string, value: unknown, detail: string): StatusCause {
    return { reason: 'FieldValueTypeInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${detail}` };
  },
};

export function methodNotAllowed(method: string, what: string): StatusError {
  return new StatusError(405, 'MethodNotAllowed', `${method} is not supported on ${what}`, {});
}

export function notAcceptable(supported: readonly string[]): StatusError {
  return new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${supported.join(', ')}`, {});
}

export function unsupportedMediaType(contentType: string, supported: readonly string[]): StatusError {
  return new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`,
    { causes: [{ message: `unsupported Content-Type ${JSON.stringify(contentType)}` }] },
  );
}

export function tooLarge(limit: number): StatusError {
  return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`, {});
}

export function tooManyRequests(message: string, retryAfter: number): StatusError {
  return new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds: retryAfter }, { 'Retry-After': String(retryAfter) });
}

export function internalError(message: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function serviceUnavailable(message: string, retryAfter = 1): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message, { retryAfterSeconds: retryAfter }, { 'Retry-After': String(retryAfter) });
}

/** The answer for a resourceVersion newer than the store has reached (kube-apiserver's wording). */
export function tooLargeResourceVersion(requested: number, current: number): StatusError {
  return new StatusError(
    504,
    'Timeout',
    `Timeout: Too large resource version: ${requested}, current: ${current}`,
    { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
    { 'Retry-After': '1' },
  );
}

/** A proxied backend answered something the gateway will not relay (a redirect); kube-aggregator answers 502 without a reason. */
export function badGateway(message: string): StatusError {
  return new StatusError(502, undefined, message, {});
}

export function timeout(message: string): StatusError {
  return new StatusError(504, 'Timeout', message, {});
}

/**
 * Success Status, as returned by deletes that remove an object at once: as
 * kube's registry builds it, without a code (its `code` is omitted when 0)
 * and `details` as written (no empty group).
 */
export function success(details: StatusDetails): Omit<Status, 'code'> & { status: 'Success' } {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: asWritten(DETAILS, details) as StatusDetails };
}

/** Anything thrown that is not a StatusError becomes a 500; the caller logs the original. */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  return internalError('an unexpected error occurred; see the server log');
}
