// delete and deletecollection: DeleteOptions (preconditions, propagation
// policy, grace period, dryRun), two-phase deletion (an object with
// finalizers gets a deletionTimestamp and stays until they are gone), and
// the unsafe deletion of corrupt objects behind AllowUnsafeMalformedObjectDeletion.
// A request's delete is admitted on the stored object after its preconditions
// (deletecollection: each object), as kube's deleteValidation runs.
import type { BackendRequest } from '../../../lib/api/backend.js';
import { isPlainObject, rfc3339, type KObject } from '../../../lib/api/meta.js';
import { cause, conflict, forbiddenMessage, invalid, notFound, STALE_OBJECT, success, StatusError, type GroupResource } from '../../../lib/api/status.js';
import { decodeObject, readBody } from '../../../lib/http/body.js';
import { negotiateInput } from '../../../lib/http/negotiate.js';
import { encode, sendBody, sendObject, wantsPretty } from '../../../lib/http/respond.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import { finalizersForDelete } from '../controllers/garbagecollector-policy.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { parseListRequest } from '../listoptions.js';
import { listSelected, selectsConverted } from '../selection.js';
import { markTerminating, PROTECTED_NAMESPACES } from '../namespaces.js';
import { isFinalized } from '../objects.js';
import { isCrdType, markCrdTerminating } from '../controllers/crd.js';
import { convertsOnRead, listAs, listJson, outputFor } from '../render.js';
import { served, servedAll } from '../conversion.js';
import { fromStoreError, storeCall } from '../storeerrors.js';
import { retryOnConflict, RETRY, StoreError } from '../store/types.js';
import { parseDeleteOptions, type DeleteOptions } from './params.js';
import { admissionAttributes } from '../admission/attributes.js';
import { mutate, validate } from '../admission/run.js';

async function deleteOptionsOf(env: CoreEnv, r: BackendRequest): Promise<DeleteOptions> {
  const hasBody = r.body !== undefined || Number(r.req.headers['content-length'] ?? 0) > 0 || r.req.headers['transfer-encoding'] !== undefined;
  let body: Record<string, unknown> | undefined;
  if (hasBody) {
    const buf = r.body ?? (await readBody(r.req, env.bodyLimit));
    if (buf.length > 0) body = decodeObject(buf, negotiateInput(r.req.headers['content-type'], env.cbor));
  }
  return parseDeleteOptions(r.query, body);
}

function isNamespace(t: ResourceType): boolean {
  return t.group === '' && t.plural === 'namespaces';
}

/**
 * The grace period of a graceful delete, for types that have one (pods, as
 * kube's pod strategy decides it): the option, else the pod's
 * terminationGracePeriodSeconds; 0 for a pod no node runs (no spec.nodeName)
 * or one that has finished; negative becomes 1. Undefined = no graceful deletion.
 */
function gracePeriodOf(t: ResourceType, obj: KObject, opts: DeleteOptions): number | undefined {
  if (!(t.group === '' && t.plural === 'pods')) return undefined;
  const spec = isPlainObject(obj['spec']) ? obj['spec'] : {};
  const status = isPlainObject(obj['status']) ? obj['status'] : {};
  let period = opts.gracePeriodSeconds ?? (typeof spec['terminationGracePeriodSeconds'] === 'number' ? spec['terminationGracePeriodSeconds'] : 0);
  if (typeof spec['nodeName'] !== 'string' || spec['nodeName'] === '') period = 0;
  if (status['phase'] === 'Failed' || status['phase'] === 'Succeeded') period = 0;
  return period < 0 ? 1 : period;
}

type Plan = { kind: 'remove' } | { kind: 'update'; next: KObject } | { kind: 'unchanged' };

/** What a delete does to the current object (kube's BeforeDelete and updateForGracefulDeletionAndFinalizers). */
function planDelete(t: ResourceType, cur: KObject, opts: DeleteOptions, now: number): Plan {
  const meta = cur.metadata;
  let deletionTimestamp = meta.deletionTimestamp;
  let grace = meta.deletionGracePeriodSeconds;
  let graceChanged = false;
  if (deletionTimestamp !== undefined) {
    // Already being deleted: only a shorter grace period changes anything.
    if (grace !== undefined && grace > 0) {
      if (opts.gracePeriodSeconds === undefined || opts.gracePeriodSeconds >= grace) return { kind: 'unchanged' };
      const period = Math.max(0, opts.gracePeriodSeconds);
      deletionTimestamp = rfc3339(Date.parse(deletionTimestamp) - grace * 1000 + period * 1000);
      grace = period;
      graceChanged = true;
    }
  } else {
    const period = gracePeriodOf(t, cur, opts);
    if (period !== undefined && period > 0) {
      deletionTimestamp = rfc3339(now + period * 1000);
      grace = period;
      graceChanged = true;
    }
  }
  const finalizers = finalizersForDelete(t, cur, opts);
  let next: KObject = { ...cur, metadata: { ...meta, finalizers } };
  if (finalizers.length === 0) delete next.metadata.finalizers;
  if (isNamespace(t)) next = markTerminating(next, now);
  else if (isCrdType(t) && meta.deletionTimestamp === undefined) next = markCrdTerminating(next, now);
  const pendingFinalizers = !isFinalized(next);
  if (!pendingFinalizers && !(grace !== undefined && grace > 0)) return { kind: 'remove' };
  if (!graceChanged && finalizers === (meta.finalizers ?? []) && meta.deletionTimestamp !== undefined) return { kind: 'unchanged' };
  next.metadata.deletionTimestamp = deletionTimestamp ?? rfc3339(now);
  next.metadata.deletionGracePeriodSeconds = grace ?? 0;
  return { kind: 'update', next };
}

type Outcome = { kind: 'removed'; obj: KObject } | { kind: 'pending'; obj: KObject };

/** A request's validating admission of deleting the stored `cur`; controllers' deletes have none. */
type AdmitDelete = (cur: KObject) => Promise<void> | undefined;

/**
 * Deletes one object; returns what happened. A corrupt object's StoreError
 * is thrown as is (the caller decides about unsafe deletion); other store
 * failures as Status errors.
 */
export async function deleteOne(env: CoreEnv, t: ResourceType, namespace: string, name: string, opts: DeleteOptions, admit?: AdmitDelete): Promise<Outcome> {
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const key = objectKey(t, namespace, name);
  return retryOnConflict<Outcome>(
    async () => {
      let cur: KObject | undefined;
      try {
        cur = await env.store.get(key);
      } catch (err) {
        if (err instanceof StoreError && err.code === 'corrupt') throw err;
        throw fromStoreError(err, gr, name);
      }
      if (!cur) throw notFound(gr, name);
      const { uid, resourceVersion } = opts.preconditions;
      if (uid && uid !== cur.metadata.uid) {
        throw conflict(gr, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
      }
      if (resourceVersion && resourceVersion !== cur.metadata.resourceVersion) {
        throw conflict(
          gr,
          name,
          `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in meta: ${cur.metadata.resourceVersion ?? ''}`,
        );
      }
      await admit?.(cur);
      const plan = planDelete(t, cur, opts, env.clock());
      if (plan.kind === 'unchanged') return { kind: 'pending', obj: cur };
      if (opts.dryRun) return plan.kind === 'update' ? { kind: 'pending', obj: plan.next } : { kind: 'removed', obj: cur };
      const rev = Number(cur.metadata.resourceVersion);
      try {
        if (plan.kind === 'update') return { kind: 'pending', obj: await env.store.update(key, plan.next, rev) };
        return { kind: 'removed', obj: await env.store.delete(key, rev) };
      } catch (err) {
        if (err instanceof StoreError && err.code === 'conflict') return RETRY;
        throw fromStoreError(err, gr, name);
      }
    },
    () => conflict(gr, name, STALE_OBJECT),
  );
}

/**
 * A controller's delete (the garbage collector's): the API's deletion with
 * these options and a uid precondition. false = gone, recreated or corrupt meanwhile.
 */
export async function deleteAsController(env: CoreEnv, t: ResourceType, obj: KObject, opts: Pick<DeleteOptions, 'propagationPolicy'>): Promise<boolean> {
  const full: DeleteOptions = {
    dryRun: false,
    hasPreconditions: true,
    ignoreStoreReadErrorWithClusterBreakingPotential: false,
    preconditions: obj.metadata.uid ? { uid: obj.metadata.uid } : {},
    ...opts,
  };
  try {
    await deleteOne(env, t, obj.metadata.namespace ?? '', obj.metadata.name ?? '', full);
    return true;
  } catch (err) {
    if (err instanceof StatusError && (err.code === 404 || err.code === 409)) return false;
    if (err instanceof StoreError && err.code === 'corrupt') return false;
    throw err;
  }
}

export async function deleteObject(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const out = outputFor(env, t, r.req.headers.accept);
  const opts = await deleteOptionsOf(env, r);
  const name = r.info.name;
  const gr: GroupResource = { group: t.group, resource: t.plural };
  if (isNamespace(t) && PROTECTED_NAMESPACES.has(name)) {
    throw forbiddenMessage(`namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, group: '', kind: 'namespaces' });
  }
  const pretty = wantsPretty(r.req, r.query);
  const statusOk = (uid: string) => success({ name, group: t.group, kind: t.plural, uid });
  // Without the gate the option is dropped, as kube-apiserver does.
  const unsafe = opts.ignoreStoreReadErrorWithClusterBreakingPotential && env.allowUnsafeMalformedObjectDeletion === true;
  const key = objectKey(t, r.info.namespace, name);
  if (unsafe && !(await isCorrupt(env, key, gr, name))) {
    throw invalid({ group: t.group, kind: t.plural }, name, [
      cause.invalid(
        'ignoreStoreReadErrorWithClusterBreakingPotential',
        true,
        'is exclusively used to delete corrupt object(s), try again by removing this option',
      ),
    ]);
  }
  let outcome: Outcome;
  try {
    // The normal deletion first, even when unsafe deletion is asked for: it is expected to fail.
    outcome = await deleteOne(env, t, r.info.namespace, name, opts, await admitDelete(env, t, r, opts));
  } catch (err) {
    if (!(unsafe && err instanceof StoreError && err.code === 'corrupt')) throw fromStoreError(err, gr, name);
    env.log(`unsafe deletion of the corrupt object ${key}: finalizers and preconditions ignored`);
    try {
      await env.store.deleteCorrupt(key);
    } catch (e) {
      if (!(e instanceof StoreError && e.code === 'not-found')) throw fromStoreError(e, gr, name);
    }
    sendObject(r, 200, statusOk(''), out, pretty);
    return;
  }
  // kube answers 202 when a delete with orphanDependents=false did not remove the object yet.
  const code = outcome.kind === 'pending' && opts.orphanDependents === false ? 202 : 200;
  if (outcome.kind === 'pending' || t.returnsDeletedObject) {
    sendObject(r, code, await served(env, t, outcome.obj), out, pretty);
    return;
  }
  sendObject(r, code, statusOk(outcome.obj.metadata.uid ?? ''), out, pretty);
}

/**
 * The admission of a request's delete: the mutating plugins once (no object:
 * they may only refuse), then a check that runs the validating plugins on
 * each stored object the request deletes.
 */
async function admitDelete(env: CoreEnv, t: ResourceType, r: BackendRequest, opts: DeleteOptions): Promise<AdmitDelete> {
  const write = { operation: 'DELETE', object: undefined, dryRun: opts.dryRun, deleteOptions: opts } as const;
  await mutate(env, admissionAttributes(t, r, { ...write, oldObject: undefined }));
  // A collection's objects are named by themselves; one object keeps the request's names (a namespace's is its own name).
  const collection = r.info.verb === 'deletecollection';
  return (cur) =>
    validate(
      env,
      admissionAttributes(t, r, {
        ...write,
        oldObject: cur,
        ...(collection ? { namespace: cur.metadata.namespace ?? '', name: cur.metadata.name ?? '' } : {}),
      }),
    );
}

async function isCorrupt(env: CoreEnv, key: string, gr: GroupResource, name: string): Promise<boolean> {
  try {
    await env.store.get(key);
    return false;
  } catch (err) {
    if (err instanceof StoreError && err.code === 'corrupt') return true;
    throw fromStoreError(err, gr, name);
  }
}

export async function deleteCollection(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const out = outputFor(env, t, r.req.headers.accept);
  const opts = await deleteOptionsOf(env, r);
  const prefix = listPrefix(t, r.info.namespace);
  const lr = parseListRequest(t, r.query, prefix);
  const gr: GroupResource = { group: t.group, resource: t.plural };
  // Selectors reading what a conversion may change choose among the objects as the request's version serves them (selection.ts).
  const converted = lr.selection.content !== undefined && selectsConverted(env, t);
  const listed = await storeCall(gr, '', () =>
    converted
      ? listSelected(env, t, prefix, lr.selection.identity ? { filter: lr.selection.identity } : {}, lr.selection.content!)
      : env.store.list(prefix, lr.filter ? { filter: lr.filter } : {}),
  );
  const results: KObject[] = [];
  const admit = await admitDelete(env, t, r, opts);
  for (const obj of listed.items) {
    const name = obj.metadata.name ?? '';
    if (isNamespace(t) && PROTECTED_NAMESPACES.has(name)) continue;
    try {
      results.push((await deleteOne(env, t, obj.metadata.namespace ?? '', name, opts, admit)).obj);
    } catch (err) {
      const e = fromStoreError(err, gr, name);
      // Gone since the list: someone else deleted it.
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }
  const meta = { resourceVersion: String(Math.max(listed.rev, ...results.map((o) => Number(o.metadata.resourceVersion)))) };
  // The deleted objects as the request's version serves them (custom resources of several versions).
  const items = !convertsOnRead(t) ? results : await servedAll(env, t, results);
  const shaped = listAs(t, items, meta, out, r.query, env.clock());
  sendBody(r, 200, out.contentType, shaped ? encode(shaped, out, wantsPretty(r.req, r.query)) : listJson(t, items, meta));
}
