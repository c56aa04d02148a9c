// POST …/pods/<name>/eviction (policy/v1 Eviction, v1beta1 accepted), as
// kube's EvictionREST: a pod that is Pending, finished or already deleting
// is deleted at once; another is checked against the one
// PodDisruptionBudget selecting it — 429 while the budget has not been
// processed or allows no disruption, the budget's disruptionsAllowed
// decremented (and the pod noted in disruptedPods) before the delete — and
// dry-run decides without writing. No disruption controller runs here: a
// budget's status is what its writer put there through /status.
import type { BackendRequest } from '../../../lib/api/backend.js';
import { isPlainObject, rfc3339, type KObject } from '../../../lib/api/meta.js';
import { cause, conflict, forbidden, invalid, notFound, STALE_OBJECT, StatusError, type GroupResource } from '../../../lib/api/status.js';
import { labelSelectorFromObject } from '../../../lib/api/selectors.js';
import { setOwn } from '../../../lib/api/own.js';
import { list, num, str } from '../../../lib/registry/fields.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { fromStoreError, storeCall } from '../storeerrors.js';
import { retryOnConflict, RETRY, StoreError } from '../store/types.js';
import { deleteOne } from './delete.js';
import { parseDeleteOptions, parseDryRun, type DeleteOptions } from './params.js';
import { objectField, readAdmitted, sendCreatedStatus, validateAdmitted, type RequestKind } from './subcreate.js';

const EVICTION: RequestKind = { group: 'policy', version: 'v1', kind: 'Eviction', accepts: ['policy/v1', 'policy/v1beta1'] };
const PODS: GroupResource = { group: '', resource: 'pods' };
const PDBS: GroupResource = { group: 'policy', resource: 'poddisruptionbudgets' };
/** kube's EvictionsRetry: 20 steps. */
const EVICTION_TRIES = 20;
/** MaxDisruptedPodSize: evictions the disruption controller has not yet confirmed. */
const MAX_DISRUPTED_PODS = 2000;
const VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget.";
/** PodDisruptionBudgetStatus in Go's field order. */
const PDB_STATUS_ORDER = ['observedGeneration', 'disruptedPods', 'disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods', 'conditions'];

function phase(pod: KObject): string {
  return str(pod, 'status', 'phase');
}

/** canIgnorePDB: the disruption already happened, or the pod never ran. */
function canIgnorePdb(pod: KObject): boolean {
  const p = phase(pod);
  return p === 'Succeeded' || p === 'Failed' || p === 'Pending' || pod.metadata.deletionTimestamp !== undefined;
}

/** shouldEnforceResourceVersion: a pod that may still become ready is deleted only as it was read. */
function enforcesResourceVersion(pod: KObject): boolean {
  const p = phase(pod);
  return !(p === 'Succeeded' || p === 'Failed' || pod.metadata.deletionTimestamp !== undefined);
}

function isReady(pod: KObject): boolean {
  return list(pod, 'status', 'conditions').some((c) => str(c, 'type') === 'Ready' && str(c, 'status') === 'True');
}

function atVersion(opts: DeleteOptions, pod: KObject): DeleteOptions {
  return { ...opts, hasPreconditions: true, preconditions: { ...opts.preconditions, resourceVersion: pod.metadata.resourceVersion ?? '' } };
}

/** createTooManyRequestsError: the budget has not caught up with its spec, or the pod changed meanwhile. */
function stillProcessing(pdb: string): StatusError {
  return new StatusError(
    429,
    'TooManyRequests',
    VIOLATES,
    { causes: [{ reason: 'DisruptionTarget', message: `The disruption budget ${pdb} is still being processed by the server.` }], retryAfterSeconds: 10 },
    { 'Retry-After': '10' },
  );
}

/** The budgets of the pod's namespace whose (non-empty, valid) selector matches its labels. */
async function budgetsOf(env: CoreEnv, pod: KObject): Promise<KObject[]> {
  const t = env.registry.lookup('policy', 'v1', 'poddisruptionbudgets');
  if (!t) return [];
  const listed = await storeCall(PDBS, '', () => env.store.list(listPrefix(t, pod.metadata.namespace ?? '')));
  return listed.items.filter((pdb) => {
    const raw = objectField(pdb, 'spec')['selector'];
    if (!isPlainObject(raw)) return false;
    try {
      const sel = labelSelectorFromObject(raw);
      return sel.requirements.length > 0 && sel.matches(pod.metadata.labels ?? {});
    } catch {
      // An invalid selector matches no pod.
      return false;
    }
  });
}

function ordered(status: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of PDB_STATUS_ORDER) if (status[k] !== undefined) out[k] = status[k];
  for (const [k, v] of Object.entries(status)) if (!Object.hasOwn(out, k)) setOwn(out, k, v);
  return out;
}

/** pdbhelper.UpdateDisruptionAllowedCondition through meta's SetStatusCondition. */
function disruptionAllowedCondition(status: Record<string, unknown>, now: number): unknown[] {
  const allowed = num(status, 'disruptionsAllowed') > 0;
  const next = {
    type: 'DisruptionAllowed',
    status: allowed ? 'True' : 'False',
    observedGeneration: num(status, 'observedGeneration'),
    lastTransitionTime: rfc3339(now),
    reason: allowed ? 'SufficientPods' : 'InsufficientPods',
    message: '',
  };
  const conditions = list(status, 'conditions').filter(isPlainObject);
  const i = conditions.findIndex((c) => c['type'] === 'DisruptionAllowed');
  if (i < 0) return [...conditions, next];
  // The transition time moves only when the status does.
  const old = conditions[i]!;
  const kept = old['status'] === next.status ? { lastTransitionTime: old['lastTransitionTime'] } : {};
  return conditions.map((c, j) => (j === i ? { ...next, ...kept } : c));
}

/** checkAndDecrement: refuses, or takes one disruption from the budget (written unless dry-run). 'conflict' = read it again. */
async function checkAndDecrement(env: CoreEnv, pdb: KObject, podName: string, dryRun: boolean): Promise<'done' | 'conflict'> {
  const name = pdb.metadata.name ?? '';
  const status = objectField(pdb, 'status');
  if (num(status, 'observedGeneration') < (pdb.metadata.generation ?? 0)) throw stillProcessing(name);
  const allowed = num(status, 'disruptionsAllowed');
  if (allowed < 0) throw forbidden({ group: 'policy', resource: 'poddisruptionbudget' }, name, 'pdb disruptions allowed is negative');
  if (Object.keys(objectField(status, 'disruptedPods')).length > MAX_DISRUPTED_PODS) {
    throw forbidden(
      { group: 'policy', resource: 'poddisruptionbudget' },
      name,
      'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
    );
  }
  if (allowed === 0) {
    const why = `The disruption budget ${name} needs ${num(status, 'desiredHealthy')} healthy pods and has ${num(status, 'currentHealthy')} currently`;
    throw new StatusError(429, 'TooManyRequests', VIOLATES, { causes: [{ reason: 'DisruptionTarget', message: why }] });
  }
  if (dryRun) return 'done';
  const now = env.clock();
  const next: Record<string, unknown> = { ...status, disruptionsAllowed: allowed - 1 };
  if (allowed - 1 === 0) next['conditions'] = disruptionAllowedCondition(next, now);
  const disrupted = { ...objectField(status, 'disruptedPods') };
  setOwn(disrupted, podName, rfc3339(now));
  next['disruptedPods'] = disrupted;
  const t = env.registry.lookup('policy', 'v1', 'poddisruptionbudgets')!;
  try {
    await env.store.update(objectKey(t, pdb.metadata.namespace ?? '', name), { ...pdb, status: ordered(next) }, Number(pdb.metadata.resourceVersion));
    return 'done';
  } catch (err) {
    if (err instanceof StoreError && (err.code === 'conflict' || err.code === 'not-found')) return 'conflict';
    throw fromStoreError(err, PDBS, name);
  }
}

export async function evictPod(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const queryDryRun = parseDryRun(r.query, 'CreateOptions');
  const eviction = await readAdmitted(env, t, r, EVICTION, queryDryRun);
  const raw = eviction['deleteOptions'];
  if (raw !== undefined && raw !== null && !isPlainObject(raw)) {
    throw invalid({ group: 'policy', kind: 'Eviction' }, r.info.name, [
      cause.typeInvalid('deleteOptions', raw, `must be of type object, not ${Array.isArray(raw) ? 'array' : typeof raw}`),
    ]);
  }
  const given = parseDeleteOptions(new URLSearchParams(), isPlainObject(raw) ? { ...raw, kind: undefined } : {});
  // propagateDryRun: the request's dry-run reaches the eviction's delete.
  const opts: DeleteOptions = { ...given, dryRun: given.dryRun || queryDryRun };
  await validateAdmitted(env, t, r, EVICTION, eviction, opts.dryRun);
  const { namespace, name } = r.info;
  const key = objectKey(t, namespace, name);
  const ownVersion = opts.preconditions.resourceVersion !== undefined;
  const remove = (o: DeleteOptions) => deleteOne(env, t, namespace, name, o);

  // Pods whose budget does not matter are deleted at once, retried while they change (unless the client pinned a version).
  let pod: KObject | undefined;
  const deleted = await retryOnConflict<boolean>(
    async (tried) => {
      pod = await storeCall(PODS, name, () => env.store.get(key));
      if (!pod) throw notFound(PODS, name);
      if (!canIgnorePdb(pod)) return false;
      try {
        await remove(enforcesResourceVersion(pod) && !ownVersion ? atVersion(opts, pod) : opts);
        return true;
      } catch (err) {
        if (err instanceof StatusError && err.code === 409 && !ownVersion && tried < EVICTION_TRIES - 1) return RETRY;
        throw err;
      }
    },
    () => conflict(PODS, name, STALE_OBJECT),
    EVICTION_TRIES,
  );
  if (deleted) return sendCreatedStatus(env, r);

  const running = pod!;
  const budgets = await budgetsOf(env, running);
  if (budgets.length > 1)
    throw new StatusError(500, undefined, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  let pinned = false;
  let budgetName = '';
  if (budgets.length === 1) {
    let pdb = budgets[0]!;
    budgetName = pdb.metadata.name ?? '';
    const spec = objectField(pdb, 'spec');
    const status = objectField(pdb, 'status');
    const unhealthyGoes =
      spec['unhealthyPodEvictionPolicy'] === 'AlwaysAllow' ||
      (num(status, 'currentHealthy') >= num(status, 'desiredHealthy') && num(status, 'desiredHealthy') > 0);
    if (!isReady(running) && unhealthyGoes) pinned = true;
    else {
      const pdbType = env.registry.lookup('policy', 'v1', 'poddisruptionbudgets')!;
      const pdbKey = objectKey(pdbType, namespace, budgetName);
      await retryOnConflict(
        async (tried) => {
          if (tried > 0) {
            const fresh = await storeCall(PDBS, budgetName, () => env.store.get(pdbKey));
            if (!fresh) throw notFound(PDBS, budgetName);
            pdb = fresh;
          }
          return (await checkAndDecrement(env, pdb, name, opts.dryRun)) === 'done' ? undefined : RETRY;
        },
        () =>
          new StatusError(
            504,
            'Timeout',
            `Timeout: couldn't update PodDisruptionBudget ${JSON.stringify(budgetName)} due to conflicts`,
            { retryAfterSeconds: 10 },
            { 'Retry-After': '10' },
          ),
        EVICTION_TRIES,
      );
    }
  }
  try {
    await remove(pinned ? atVersion(opts, running) : opts);
  } catch (err) {
    // The pod changed since it was judged unready: the client tries again.
    if (err instanceof StatusError && err.code === 409 && pinned && !ownVersion) throw stillProcessing(budgetName);
    throw err;
  }
  sendCreatedStatus(env, r);
}
