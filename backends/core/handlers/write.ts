// create (POST) and update (PUT, including the status and finalize subresources).
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import { alreadyExists, conflict, notFound, STALE_OBJECT, type GroupResource } from '../../../lib/api/status.js';
import { decodeObject, readBody } from '../../../lib/http/body.js';
import { negotiateInput, negotiateOutput } from '../../../lib/http/negotiate.js';
import { sendObject, wantsPretty } from '../../../lib/http/respond.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { requireActiveNamespace } from '../namespaces.js';
import { checkEnvelope, checkPathAgreement, isFinalized, prepareCreate, prepareUpdate, type UpdateTarget } from '../objects.js';
import { objectAs } from '../render.js';
import { fromStoreError, storeCall } from '../storeerrors.js';
import { StoreError } from '../store/types.js';
import { parseDryRun } from './params.js';

async function readObject(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<KObject> {
  const format = negotiateInput(r.req.headers['content-type']);
  return checkEnvelope(t, decodeObject(await readBody(r.req, env.bodyLimit), format));
}

function respond(env: CoreEnv, t: ResourceType, r: BackendRequest, code: number, obj: KObject): void {
  const out = negotiateOutput(r.req.headers.accept);
  sendObject(r.req, r.res, code, objectAs(t, obj, out, r.query, env.clock()), out, wantsPretty(r.req, r.query));
}

async function createObject(env: CoreEnv, t: ResourceType, r: BackendRequest, obj: KObject, dryRun: boolean): Promise<void> {
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const prepared = prepareCreate(t, obj, env.clock());
  const name = prepared.metadata.name!;
  if (t.namespaced) await requireActiveNamespace(env, t, r.info.namespace, name);
  const key = objectKey(t, r.info.namespace, name);
  if (dryRun) {
    if (await storeCall(gr, name, () => env.store.get(key))) throw alreadyExists(gr, name);
    respond(env, t, r, 201, prepared);
    return;
  }
  const stored = await storeCall(gr, name, () => env.store.create(key, prepared));
  respond(env, t, r, 201, stored);
}

export async function create(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  negotiateOutput(r.req.headers.accept);
  const dryRun = parseDryRun(r.query, 'CreateOptions');
  const obj = await readObject(env, t, r);
  checkPathAgreement(t, obj, r.info.namespace);
  await createObject(env, t, r, obj, dryRun);
}

export async function update(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  negotiateOutput(r.req.headers.accept);
  const dryRun = parseDryRun(r.query, 'UpdateOptions');
  const target: UpdateTarget = r.info.subresource === 'status' ? 'status' : r.info.subresource === 'finalize' ? 'finalize' : 'main';
  const obj = await readObject(env, t, r);
  const name = r.info.name;
  checkPathAgreement(t, obj, r.info.namespace, name);
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const key = objectKey(t, r.info.namespace, name);
  const unconditional = !obj.metadata.resourceVersion;
  for (;;) {
    const old = await storeCall(gr, name, () => env.store.get(key));
    if (!old) {
      if (target !== 'main' || !t.createOnUpdate) throw notFound(gr, name);
      if (!unconditional) throw notFound(gr, name);
      await createObject(env, t, r, obj, dryRun);
      return;
    }
    const next = prepareUpdate(t, structuredClone(obj), old, target);
    if (!next) {
      respond(env, t, r, 200, old);
      return;
    }
    if (dryRun) {
      respond(env, t, r, 200, { ...next, metadata: { ...next.metadata, resourceVersion: old.metadata.resourceVersion } });
      return;
    }
    const rev = Number(old.metadata.resourceVersion);
    try {
      if (next.metadata.deletionTimestamp && isFinalized(next)) {
        // The last finalizer went: the object is removed now.
        const removed = await env.store.delete(key, rev);
        respond(env, t, r, 200, removed);
      } else {
        respond(env, t, r, 200, await env.store.update(key, next, rev));
      }
      return;
    } catch (err) {
      if (err instanceof StoreError && err.code === 'conflict') {
        if (unconditional) continue;
        throw conflict(gr, name, STALE_OBJECT);
      }
      if (err instanceof StoreError && err.code === 'not-found') continue;
      throw fromStoreError(err, gr, name);
    }
  }
}
