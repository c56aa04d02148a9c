// AdmissionReview as kube sends it (admission.k8s.io/v1, or v1beta1 when that
// is all a webhook accepts) and the checks kube makes of the answer: the
// same version and kind, the request's uid, a JSONPatch only.
import type { KObject } from '../../../../lib/api/meta.js';
import { isPlainObject } from '../../../../lib/api/meta.js';
import type { AdmissionAttributes } from '../types.js';
import type { Invocation } from '../matching/index.js';

export const REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type ReviewVersion = (typeof REVIEW_VERSIONS)[number];

/** The first version the webhook accepts that Gatehouse speaks. */
export function reviewVersionOf(accepted: readonly string[]): ReviewVersion | undefined {
  return accepted.find((v): v is ReviewVersion => (REVIEW_VERSIONS as readonly string[]).includes(v));
}

/** A request a webhook could not be called for or answered wrongly: failurePolicy decides. */
export class CallError extends Error {}

/** The write's options as kube serialises them (meta.k8s.io/v1 CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). */
export function optionsOf(a: AdmissionAttributes): Record<string, unknown> {
  const o: Record<string, unknown> = { kind: a.options.kind, apiVersion: 'meta.k8s.io/v1' };
  if (a.dryRun) o['dryRun'] = ['All'];
  if (a.options.fieldManager !== undefined) o['fieldManager'] = a.options.fieldManager;
  const d = a.options.delete;
  if (d) {
    if (d.gracePeriodSeconds !== undefined) o['gracePeriodSeconds'] = d.gracePeriodSeconds;
    if (d.hasPreconditions) o['preconditions'] = { ...d.preconditions };
    if (d.orphanDependents !== undefined) o['orphanDependents'] = d.orphanDependents;
    if (d.propagationPolicy !== undefined) o['propagationPolicy'] = d.propagationPolicy;
  }
  return o;
}

export function reviewRequest(
  version: ReviewVersion,
  uid: string,
  a: AdmissionAttributes,
  inv: Invocation,
  object: KObject | undefined,
  oldObject: KObject | undefined,
): Record<string, unknown> {
  const user: Record<string, unknown> = { username: a.user.username };
  if (a.user.uid) user['uid'] = a.user.uid;
  if (a.user.groups.length > 0) user['groups'] = a.user.groups;
  if (a.user.extra && Object.keys(a.user.extra).length > 0) user['extra'] = a.user.extra;
  const request: Record<string, unknown> = {
    uid,
    kind: inv.kind,
    resource: inv.resource,
    ...(a.subresource ? { subResource: a.subresource, requestSubResource: a.subresource } : {}),
    requestKind: a.kind,
    requestResource: a.resource,
    ...(a.name ? { name: a.name } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    operation: a.operation,
    userInfo: user,
    object: object ?? null,
    oldObject: oldObject ?? null,
    dryRun: a.dryRun,
    options: optionsOf(a),
  };
  return { apiVersion: `admission.k8s.io/${version}`, kind: 'AdmissionReview', request };
}

export interface ReviewResponse {
  readonly allowed: boolean;
  readonly status?: Record<string, unknown>;
  /** The decoded JSONPatch (mutating webhooks). */
  readonly patch?: Buffer;
  readonly warnings: readonly string[];
  readonly auditAnnotations: ReadonlyArray<readonly [string, string]>;
}

/** kube's VerifyAdmissionResponse; throws CallError with kube's words. */
export function readResponse(version: ReviewVersion, uid: string, mutating: boolean, body: unknown): ReviewResponse {
  const gvk = (o: Record<string, unknown>) => `${String(o['apiVersion'] ?? '')}, Kind=${String(o['kind'] ?? '')}`;
  if (!isPlainObject(body)) throw new CallError('received invalid webhook response: the response is not an AdmissionReview');
  if (body['apiVersion'] !== `admission.k8s.io/${version}` || body['kind'] !== 'AdmissionReview')
    throw new CallError(`received invalid webhook response: expected webhook response of admission.k8s.io/${version}, Kind=AdmissionReview, got ${gvk(body)}`);
  const r = body['response'];
  if (!isPlainObject(r)) throw new CallError('received invalid webhook response: webhook response was absent');
  const got = typeof r['uid'] === 'string' ? r['uid'] : '';
  if (got !== uid) throw new CallError(`received invalid webhook response: expected response.uid="${uid}", got "${got}"`);
  const patchText = typeof r['patch'] === 'string' ? r['patch'] : '';
  const patchType = typeof r['patchType'] === 'string' ? r['patchType'] : '';
  let patch: Buffer | undefined;
  if (mutating && patchText !== '') {
    if (version === 'v1' && patchType === '')
      throw new CallError('received invalid webhook response: webhook returned response.patch but not response.patchType');
    if (patchType !== '' && patchType !== 'JSONPatch')
      throw new CallError(`received invalid webhook response: webhook returned invalid response.patchType of "${patchType}"`);
    patch = Buffer.from(patchText, 'base64');
  } else if (!mutating && (patchText !== '' || patchType !== '')) {
    throw new CallError('received invalid webhook response: validating webhooks may not return patches');
  }
  const warnings = Array.isArray(r['warnings']) ? r['warnings'].filter((w): w is string => typeof w === 'string') : [];
  const ann = isPlainObject(r['auditAnnotations']) ? r['auditAnnotations'] : {};
  const auditAnnotations = Object.entries(ann)
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .map(([k, v]) => [k, v] as const);
  const status = isPlainObject(r['status']) ? r['status'] : undefined;
  return { allowed: r['allowed'] === true, ...(status ? { status } : {}), ...(patch ? { patch } : {}), warnings, auditAnnotations };
}
