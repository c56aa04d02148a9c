// The scale subresource of custom resources (autoscaling/v1 Scale), as kube's
// apiextensions-apiserver serves it: replicas read from and written to the
// CRD's specReplicasPath, status replicas from statusReplicasPath, the
// selector from labelSelectorPath. GET, PUT, and merge or JSON patch of the
// Scale (what `kubectl scale` sends), and strategic merge patch for built-in
// kinds, whose Scale is a built-in type (custom resources refuse it, as kube's
// apiextensions-apiserver does); a write goes through the object's own
// update, so its generation bumps and its validation and watch events are
// those of any update; its managedFields entry has subresource "scale".
// Admission sees the Scales (the requested one, then the one stored).
import type { BackendRequest } from '../../../lib/api/backend.js';
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import {
  badRequest,
  cause,
  conflict,
  invalid,
  notFound,
  STALE_OBJECT,
  StatusError,
  unsupportedMediaType,
  type GroupResource,
} from '../../../lib/api/status.js';
import { readBody } from '../../../lib/http/body.js';
import { sendObject, wantsPretty } from '../../../lib/http/respond.js';
import { applyPatchDocument } from '../../../lib/patch/apply.js';
import { parseJsonPatch } from '../../../lib/patch/json.js';
import { PatchError } from '../../../lib/patch/errors.js';
import { patchTypeOf } from '../../../lib/patch/types.js';
import { decodeValue } from '../../../lib/validation/decode.js';
import { builtinSchemaOf } from '../../../lib/schema/index.js';
import { findFirst, simplePathKeys } from '../../../lib/crd/jsonpath.js';
import { setOwn } from '../../../lib/api/own.js';
import type { ResourceType, ScalePaths } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { prepareUpdate } from '../objects.js';
import { outputFor } from '../render.js';
import { served, toStorage } from '../conversion.js';
import { storeCall } from '../storeerrors.js';
import { parseDryRun } from './params.js';
import { updateTracker, withOwnerVersions } from './managedfields.js';
import { retryOnConflict, RETRY, StoreError } from '../store/types.js';
import { admissionAttributes, asAdmitted } from '../admission/attributes.js';
import { mutate, validate } from '../admission/run.js';

const SCALE_GK = { group: 'autoscaling', kind: 'Scale' };
const SCALE_GVK = { ...SCALE_GK, version: 'v1' };

/** The Scale of an object (kube's scaleFromCustomResource). */
export function scaleOf(obj: KObject, paths: ScalePaths): Record<string, unknown> {
  const spec = findFirst(obj, paths.specReplicasPath);
  const status = findFirst(obj, paths.statusReplicasPath);
  const selector = paths.selector ? paths.selector(obj) : paths.labelSelectorPath ? findFirst(obj, paths.labelSelectorPath) : undefined;
  const m = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: typeof spec === 'number' ? spec : 0 },
    status: { replicas: typeof status === 'number' ? status : 0, ...(typeof selector === 'string' && selector !== '' ? { selector } : {}) },
  };
}

/** Writes `replicas` at the spec replicas path of a copy of `obj`. */
function withReplicas(obj: KObject, path: string, replicas: number): KObject {
  const keys = simplePathKeys(path);
  if (!keys) throw badRequest(`the scale subresource's specReplicasPath ${path} is not a simple path`);
  const next = structuredClone(obj);
  let cur: Record<string, unknown> = next as unknown as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) {
    const child = Object.hasOwn(cur, k) ? cur[k] : undefined;
    if (!isPlainObject(child)) setOwn(cur, k, {});
    cur = cur[k] as Record<string, unknown>;
  }
  setOwn(cur, keys[keys.length - 1]!, replicas);
  return next;
}

function replicasOf(scale: unknown, name: string): number {
  const r = isPlainObject(scale) && isPlainObject(scale['spec']) ? scale['spec']['replicas'] : undefined;
  if (r === undefined) return 0;
  if (typeof r !== 'number' || !Number.isInteger(r)) throw invalid(SCALE_GK, name, [cause.invalid('spec.replicas', r, 'must be an integer')]);
  if (r < 0) throw invalid(SCALE_GK, name, [cause.invalid('spec.replicas', r, 'must be greater than or equal to 0')]);
  return r;
}

function send(env: CoreEnv, t: ResourceType, r: BackendRequest, code: number, scale: Record<string, unknown>): void {
  sendObject(r, code, scale, outputFor(env, t, r.req.headers.accept), wantsPretty(r.req, r.query));
}

/** The Scale a PUT or PATCH asks for, given the current one. */
async function requestedScale(env: CoreEnv, t: ResourceType, r: BackendRequest, current: Record<string, unknown>, body: Buffer): Promise<unknown> {
  if (r.info.verb === 'update') return decodeValue(body.toString('utf8'), 'json').value;
  const type = patchTypeOf(r.req.headers['content-type']);
  const strategic = t.crd === undefined ? builtinSchemaOf(SCALE_GVK.group, SCALE_GVK.version, SCALE_GVK.kind) : undefined;
  if (type !== 'merge' && type !== 'json' && !(type === 'strategic' && strategic)) {
    const accepted = ['application/json-patch+json', 'application/merge-patch+json'];
    throw unsupportedMediaType(String(r.req.headers['content-type'] ?? ''), strategic ? [...accepted, 'application/strategic-merge-patch+json'] : accepted);
  }
  const { value } = decodeValue(body.toString('utf8'), 'json');
  if (type === 'strategic' && !isPlainObject(value)) throw badRequest('a strategic merge patch must be a JSON object');
  try {
    return applyPatchDocument(type, current as unknown as KObject, type === 'json' ? parseJsonPatch(value) : value, strategic, env.bodyLimit);
  } catch (err) {
    if (err instanceof PatchError) throw err.code === 'failed' ? new StatusError(422, 'Invalid', err.message, {}) : badRequest(err.message);
    throw err;
  }
}

export async function serveScale(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const paths = t.scale;
  const gr: GroupResource = { group: t.group, resource: `${t.plural}/scale` };
  const name = r.info.name;
  if (!paths) throw notFound(gr, name);
  const key = objectKey(t, r.info.namespace, name);
  if (r.info.verb === 'get') {
    const obj = await storeCall(gr, name, () => env.store.get(key));
    if (!obj) throw notFound({ group: t.group, resource: t.plural }, name);
    send(env, t, r, 200, scaleOf(await served(env, t, obj), paths));
    return;
  }
  const dryRun = parseDryRun(r.query, r.info.verb === 'update' ? 'UpdateOptions' : 'PatchOptions');
  const body = r.body ?? (await readBody(r.req, env.bodyLimit));
  await retryOnConflict(
    async () => {
      const stored = await storeCall(gr, name, () => env.store.get(key));
      // Read through the version of the request (custom resources of several versions share their objects).
      const old = stored && (await served(env, t, stored));
      if (!old) throw notFound({ group: t.group, resource: t.plural }, name);
      const requested = await requestedScale(env, t, r, scaleOf(old, paths), body);
      // kube's update handler logs the decoded Scale (objectRef's resourceVersion when the client sent one); a patch has none.
      if (r.info.verb === 'update' && isPlainObject(requested)) r.audit?.requestObject(asAdmitted(requested));
      // Admission sees Scales, as kube's scale storage converts the objects it admits.
      const admitted = (object: KObject) =>
        admissionAttributes(t, r, { operation: 'UPDATE', object, oldObject: asAdmitted(scaleOf(old, paths)), dryRun, kind: SCALE_GVK });
      const wanted = isPlainObject(requested) ? ((await mutate(env, admitted(asAdmitted(requested)))) ?? requested) : requested;
      // ValidateScale before the resourceVersion precondition, as kube's scaleUpdatedObjectInfo.
      const replicas = replicasOf(wanted, name);
      const meta = isPlainObject(wanted) && isPlainObject(wanted['metadata']) ? wanted['metadata'] : {};
      const rv = meta['resourceVersion'];
      if (typeof rv === 'string' && rv !== '' && rv !== old.metadata.resourceVersion) throw conflict(gr, name, STALE_OBJECT);
      // managedFields as kube's ScaleHandler leaves them: the request's manager, with subresource "scale",
      // owns the replicas path once it changed it, and the other owners of that path lose it.
      const next = await withOwnerVersions(env, t, (versions) =>
        prepareUpdate(t, withReplicas(old, paths.specReplicasPath, replicas), { ...old }, 'main', updateTracker(env, t, r, versions)),
      );
      await validate(env, admitted(asAdmitted(scaleOf(next ?? old, paths))));
      if (!next || dryRun) {
        send(env, t, r, 200, scaleOf(next ? { ...next, metadata: { ...next.metadata, resourceVersion: old.metadata.resourceVersion } } : old, paths));
        return;
      }
      try {
        const storable = await toStorage(env, t, next);
        send(env, t, r, 200, scaleOf(await served(env, t, await env.store.update(key, storable, Number(old.metadata.resourceVersion))), paths));
      } catch (err) {
        if (err instanceof StoreError && err.code === 'conflict') {
          if (typeof rv === 'string' && rv !== '') throw conflict(gr, name, STALE_OBJECT);
          return RETRY;
        }
        throw err;
      }
    },
    () => conflict(gr, name, STALE_OBJECT),
  );
}
