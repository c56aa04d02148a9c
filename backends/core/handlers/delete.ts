// delete and deletecollection, with preconditions and two-phase deletion:
// an object with finalizers gets a deletionTimestamp and stays until they
// are gone; one without is removed at once.
import type { BackendRequest } from '../../../lib/api/backend.js';
import { rfc3339, type KObject } from '../../../lib/api/meta.js';
import { conflict, forbiddenMessage, notFound, success, StatusError, type GroupResource } from '../../../lib/api/status.js';
import { decodeObject, readBody } from '../../../lib/http/body.js';
import { negotiateInput, negotiateOutput } from '../../../lib/http/negotiate.js';
import { encode, sendBody, sendObject, wantsPretty } from '../../../lib/http/respond.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { parseListRequest } from '../listoptions.js';
import { markTerminating, PROTECTED_NAMESPACES } from '../namespaces.js';
import { isFinalized } from '../objects.js';
import { listAs, listJson } from '../render.js';
import { fromStoreError, storeCall } from '../storeerrors.js';
import { StoreError } from '../store/types.js';
import { parseDeleteOptions, type DeleteOptions } from './params.js';

async function deleteOptionsOf(env: CoreEnv, r: BackendRequest): Promise<DeleteOptions> {
  const hasBody = Number(r.req.headers['content-length'] ?? 0) > 0 || r.req.headers['transfer-encoding'] !== undefined;
  let body: Record<string, unknown> | undefined;
  if (hasBody) {
    const buf = await readBody(r.req, env.bodyLimit);
    if (buf.length > 0) body = decodeObject(buf, negotiateInput(r.req.headers['content-type']));
  }
  return parseDeleteOptions(r.query, body);
}

function isNamespace(t: ResourceType): boolean {
  return t.group === '' && t.plural === 'namespaces';
}

type Outcome = { kind: 'removed'; obj: KObject } | { kind: 'pending'; obj: KObject };

/** Deletes one object; returns what happened. */
async function deleteOne(env: CoreEnv, t: ResourceType, namespace: string, name: string, opts: DeleteOptions): Promise<Outcome> {
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const key = objectKey(t, namespace, name);
  for (;;) {
    const cur = await storeCall(gr, name, () => env.store.get(key));
    if (!cur) throw notFound(gr, name);
    const { uid, resourceVersion } = opts.preconditions;
    if (uid && uid !== cur.metadata.uid) {
      throw conflict(gr, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${cur.metadata.uid}`);
    }
    if (resourceVersion && resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(gr, name, `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in meta: ${cur.metadata.resourceVersion}`);
    }
    const rev = Number(cur.metadata.resourceVersion);
    let next: KObject | undefined;
    if (!isFinalized(cur)) {
      if (cur.metadata.deletionTimestamp) return { kind: 'pending', obj: cur };
      const now = env.clock();
      next = isNamespace(t) ? markTerminating(cur, now)
        : { ...cur, metadata: { ...cur.metadata, deletionTimestamp: rfc3339(now), deletionGracePeriodSeconds: 0 } };
    }
    if (opts.dryRun) return next ? { kind: 'pending', obj: next } : { kind: 'removed', obj: cur };
    try {
      if (next) return { kind: 'pending', obj: await env.store.update(key, next, rev) };
      return { kind: 'removed', obj: await env.store.delete(key, rev) };
    } catch (err) {
      if (err instanceof StoreError && err.code === 'conflict') continue;
      throw fromStoreError(err, gr, name);
    }
  }
}

export async function deleteObject(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const out = negotiateOutput(r.req.headers.accept);
  const opts = await deleteOptionsOf(env, r);
  const name = r.info.name;
  if (isNamespace(t) && PROTECTED_NAMESPACES.has(name)) {
    throw forbiddenMessage(`namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, group: '', kind: 'namespaces' });
  }
  const outcome = await deleteOne(env, t, r.info.namespace, name, opts);
  const pretty = wantsPretty(r.req, r.query);
  if (outcome.kind === 'pending' || t.returnsDeletedObject) {
    sendObject(r.req, r.res, 200, outcome.obj, out, pretty);
    return;
  }
  sendObject(r.req, r.res, 200, success({ name, group: t.group, kind: t.plural, uid: outcome.obj.metadata.uid ?? '' }), out, pretty);
}

export async function deleteCollection(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const out = negotiateOutput(r.req.headers.accept);
  const opts = await deleteOptionsOf(env, r);
  const prefix = listPrefix(t, r.info.namespace);
  const lr = parseListRequest(t, r.query, prefix);
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const listed = await storeCall(gr, '', () => env.store.list(prefix, lr.filter ? { filter: lr.filter } : {}));
  const results: KObject[] = [];
  for (const obj of listed.items) {
    const name = obj.metadata.name ?? '';
    if (isNamespace(t) && PROTECTED_NAMESPACES.has(name)) continue;
    try {
      results.push((await deleteOne(env, t, obj.metadata.namespace ?? '', name, opts)).obj);
    } catch (err) {
      // Gone since the list: someone else deleted it.
      if (!(err instanceof StatusError && err.code === 404)) throw err;
    }
  }
  const meta = { resourceVersion: String(Math.max(listed.rev, ...results.map((o) => Number(o.metadata.resourceVersion)))) };
  const shaped = listAs(t, results, meta, out, r.query, env.clock());
  sendBody(r.req, r.res, 200, out.contentType, shaped ? encode(shaped, out, wantsPretty(r.req, r.query)) : listJson(t, results, meta));
}
