// What the create-only subresources that answer a Status share (a pod's
// binding and eviction, as kube's NamedCreaters): the request object read and
// checked against its kind, admitted as a CREATE of that kind, and kube's
// Success answer with its code.
import type { BackendRequest } from '../../../lib/api/backend.js';
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { badRequest } from '../../../lib/api/status.js';
import { readBody } from '../../../lib/http/body.js';
import { negotiateInput, negotiateOutput, RESOURCE_AS } from '../../../lib/http/negotiate.js';
import { sendObject, wantsPretty } from '../../../lib/http/respond.js';
import { hasSchema } from '../../../lib/protobuf/codec.js';
import { decodeBody } from '../../../lib/validation/decode.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { admissionAttributes, asAdmitted } from '../admission/attributes.js';
import { mutate, validate } from '../admission/run.js';
import type { GroupVersionKind } from '../admission/types.js';

/** The kind a subresource create takes: its group/version/kind and the apiVersions kube also decodes. */
export interface RequestKind extends GroupVersionKind {
  readonly accepts: readonly string[];
}

/**
 * The request's object: decoded, its apiVersion and kind those of `k` (or
 * absent), its name the URL's (kube: "name in URL does not match name in
 * <Kind> object"), then through mutating admission.
 */
export async function readAdmitted(env: CoreEnv, t: ResourceType, r: BackendRequest, k: RequestKind, dryRun: boolean): Promise<KObject> {
  const { value } = decodeBody(r.body ?? (await readBody(r.req, env.bodyLimit)), negotiateInput(r.req.headers['content-type'], env.cbor));
  const apiVersion = value['apiVersion'];
  if (apiVersion !== undefined && !k.accepts.includes(String(apiVersion))) {
    throw badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${k.accepts[0]})`);
  }
  if (value['kind'] !== undefined && value['kind'] !== k.kind) {
    throw badRequest(`the kind in the data (${String(value['kind'])}) does not match the expected kind (${k.kind})`);
  }
  const obj = asAdmitted(value);
  const meta = obj.metadata;
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== r.info.namespace) {
    throw badRequest(`the namespace of the provided object (${String(meta.namespace)}) does not match the namespace sent on the request (${r.info.namespace})`);
  }
  if (meta.name !== r.info.name) throw badRequest(`name in URL does not match name in ${k.kind} object`);
  const admitted = { ...obj, metadata: { ...meta, namespace: r.info.namespace } } as KObject;
  const mutated = await mutate(env, attributes(t, r, k, admitted, dryRun));
  return mutated ?? admitted;
}

/** Validating admission of the (checked) request object, as kube's createValidation runs it. */
export async function validateAdmitted(env: CoreEnv, t: ResourceType, r: BackendRequest, k: RequestKind, obj: KObject, dryRun: boolean): Promise<void> {
  await validate(env, attributes(t, r, k, obj, dryRun));
}

function attributes(t: ResourceType, r: BackendRequest, k: RequestKind, object: KObject, dryRun: boolean) {
  return admissionAttributes(t, r, { operation: 'CREATE', object, oldObject: undefined, dryRun, kind: { group: k.group, version: k.version, kind: k.kind } });
}

/** kube's answer to a create that returns `Status{Status: Success}`: the create handler fills in 201. */
export function sendCreatedStatus(env: CoreEnv, r: BackendRequest): void {
  const out = negotiateOutput(r.req.headers.accept, RESOURCE_AS, { protobuf: hasSchema('v1', 'Status'), cbor: env.cbor });
  sendObject(r, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, out, wantsPretty(r.req, r.query));
}

/** An object field as a plain object (a missing or mistyped one as empty). */
export function objectField(o: unknown, key: string): Record<string, unknown> {
  const v = isPlainObject(o) ? o[key] : undefined;
  return isPlainObject(v) ? v : {};
}
