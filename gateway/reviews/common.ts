// What every virtual review type shares: POST only, a body of the path's
// apiVersion and kind, no namespace, fieldValidation as for any create, and a
// 201 answer with the status filled in. The authorization reviews
// (SubjectAccessReview family) use it too.
import { apiVersionOf } from '../../lib/registry/types.js';
import type { CreateAdmission } from '../../lib/api/backend.js';
import { badRequest, internalError, methodNotAllowed, pathNotFound } from '../../lib/api/status.js';
import { isPlainObject, type KObject } from '../../lib/api/meta.js';
import { readBody } from '../../lib/http/body.js';
import { addWarnings } from '../../lib/http/warnings.js';
import { builtinSchemaOf } from '../../lib/schema/index.js';
import { decodeBody } from '../../lib/validation/decode.js';
import { decodeFields, parseFieldValidation, strictPrefixOf } from '../../lib/validation/fields.js';
import { negotiateInput, negotiateOutput, RESOURCE_AS, type Output } from '../../lib/http/negotiate.js';
import { hasSchema } from '../../lib/protobuf/codec.js';
import { sendObject, wantsPretty } from '../../lib/http/respond.js';
import type { RequestContext } from '../pipeline/context.js';

export interface ReviewRequest {
  readonly apiVersion: string;
  readonly kind: string;
  /** The CBORServingAndStorage gate: CBOR bodies read and answers written, as kube serves every review. */
  readonly cbor: boolean;
  readonly body: Record<string, unknown>;
  readonly spec: Record<string, unknown>;
}

/** The review's answer encoding: JSON, YAML, protobuf (every review kind has Kubernetes' protobuf form), CBOR with its gate on. */
function reviewOutput(ctx: RequestContext, kind: string, cbor: boolean): Output {
  const apiVersion = apiVersionOf({ group: ctx.info.apiGroup, version: ctx.info.apiVersion });
  return negotiateOutput(ctx.req.headers.accept, RESOURCE_AS, { protobuf: hasSchema(apiVersion, kind), cbor });
}

export interface ReadOptions {
  /** LocalSubjectAccessReview: lives under /namespaces/<ns>/ only. */
  readonly namespaced?: boolean;
  /** Sees the spec as sent, before unknown fields are dropped (SubjectsReview refuses a subject its schema does not have). */
  readonly inspect?: (spec: Record<string, unknown>) => void;
  /** Mutating admission of the decoded review (absent: not admitted, as behind a remote core backend). */
  readonly admission?: CreateAdmission | undefined;
  /** The CBORServingAndStorage gate. */
  readonly cbor?: boolean | undefined;
}

/**
 * Reads and checks a review body; throws Status errors as kube-apiserver
 * words them. As kube's create handler decodes every review: per
 * `fieldValidation`, unknown fields (against the kind's schema) and
 * duplicate fields are refused (Strict: 400), warned about (Warn, the
 * default) or dropped silently (Ignore); either way they are not echoed back.
 */
export async function readReview(ctx: RequestContext, kind: string, bodyLimit: number, opts: ReadOptions = {}): Promise<ReviewRequest> {
  const { info, req } = ctx;
  const what = `${info.resource}.${info.apiGroup}`;
  if ((info.namespace !== '') !== (opts.namespaced === true)) throw pathNotFound();
  if (info.verb !== 'create' || info.name !== '' || info.subresource !== '') throw methodNotAllowed(req.method ?? 'GET', what);
  // Checked before the body is read, so a client that cannot be answered learns it at once.
  const cbor = opts.cbor === true;
  reviewOutput(ctx, kind, cbor);
  const level = parseFieldValidation(ctx.query);
  const format = negotiateInput(req.headers['content-type'], cbor);
  const { value: body, duplicates } = decodeBody(ctx.body ?? (await readBody(req, bodyLimit)), format);
  const apiVersion = apiVersionOf({ group: info.apiGroup, version: info.apiVersion });
  if (body['apiVersion'] !== undefined && body['apiVersion'] !== apiVersion) {
    throw badRequest(`the API version in the data (${String(body['apiVersion'])}) does not match the expected API version (${apiVersion})`);
  }
  if (body['kind'] !== undefined && body['kind'] !== kind) {
    throw badRequest(`the kind in the data (${String(body['kind'])}) does not match the expected kind (${kind})`);
  }
  const meta = body['metadata'];
  if (isPlainObject(meta) && typeof meta['namespace'] === 'string' && meta['namespace'] !== '' && meta['namespace'] !== info.namespace) {
    throw badRequest('the namespace of the object does not match the namespace on the request');
  }
  if (body['spec'] !== undefined && body['spec'] !== null && !isPlainObject(body['spec'])) throw badRequest(`${kind}.spec must be an object`);
  if (isPlainObject(body['spec'])) opts.inspect?.(body['spec']);
  // Wrong types are left to the review's readers, which name the field (400), as kube's decoder does.
  const { warnings } = decodeFields(body, builtinSchemaOf(info.apiGroup, info.apiVersion, kind), duplicates, level, strictPrefixOf(kind, info.apiVersion));
  addWarnings(ctx, warnings);
  const spec = body['spec'] ?? {};
  if (!isPlainObject(spec)) throw badRequest(`${kind}.spec must be an object`);
  const review = { apiVersion, kind, cbor, body, spec };
  return opts.admission ? mutateReview(ctx, review, opts.admission) : review;
}

/** The review as admission sees it: apiVersion, kind and metadata set, in the path's namespace. */
function admittedObject(ctx: RequestContext, review: ReviewRequest): KObject {
  const meta = isPlainObject(review.body['metadata']) ? review.body['metadata'] : {};
  const metadata = ctx.info.namespace ? { ...meta, namespace: ctx.info.namespace } : meta;
  return { ...review.body, apiVersion: review.apiVersion, kind: review.kind, metadata } as KObject;
}

/** kube's create handler: mutating admission may change the review (its spec is read from the result). */
async function mutateReview(ctx: RequestContext, review: ReviewRequest, admission: CreateAdmission): Promise<ReviewRequest> {
  const object = admittedObject(ctx, review);
  const out = await admission.mutate(ctx, object);
  if (out === object) return review;
  const spec = out['spec'] ?? {};
  if (!isPlainObject(spec)) throw internalError(`${review.kind}.spec must be an object`);
  return { ...review, body: out, spec };
}

/** The review's registry after its own validation: validating admission (createValidation), before the answer is computed. */
export function validateReview(ctx: RequestContext, review: ReviewRequest, admission: CreateAdmission | undefined): Promise<void> | undefined {
  return admission?.validate(ctx, admittedObject(ctx, review));
}

/** Answers 201 with the review: the request's metadata and spec (none when `spec` is null), and the computed status. */
export function sendReview(
  ctx: RequestContext,
  review: ReviewRequest,
  status: Record<string, unknown>,
  spec: Record<string, unknown> | null = review.spec,
): void {
  const meta = isPlainObject(review.body['metadata']) ? review.body['metadata'] : {};
  const out = { kind: review.kind, apiVersion: review.apiVersion, metadata: { ...meta, creationTimestamp: null }, ...(spec ? { spec } : {}), status };
  sendObject(ctx, 201, out, reviewOutput(ctx, review.kind, review.cbor), wantsPretty(ctx.req, ctx.query));
}
