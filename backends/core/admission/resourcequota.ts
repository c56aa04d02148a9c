// ResourceQuota, kube's default-on validating plugin (last in kube's order):
// a namespaced create (an update for the kinds kube charges updates of) is
// measured by its kind's evaluator (quota/evaluators.ts) against every quota
// of its namespace whose status.hard names a resource of the kind and whose
// scopes select the object; over a limit is 403 with kube's words, otherwise
// the charge is written to the quota's status.used with a compare-and-swap
// before the object is stored. As kube's plugin, the writes of one namespace
// are judged in batches by one worker of this process (everything that came
// in while a batch was written is the next batch), so concurrent creates are
// charged in order and one status write carries a whole batch; the
// compare-and-swap keeps other processes' charges (and the controller's
// recounts) from being overwritten: a conflicting quota is read again and
// the batch judged again against it, as kube retries.
import type { KObject } from '../../../lib/api/meta.js';
import { conflict, forbidden, StatusError } from '../../../lib/api/status.js';
import { record } from '../../../lib/registry/fields.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { prepareUpdate } from '../objects.js';
import { evaluatorFor, quotaIgnores, quotaMatches, type Evaluator } from '../quota/evaluators.js';
import {
  addLists,
  exceededNames,
  listsEqual,
  mask,
  negativeNames,
  prettyPrint,
  resourceListJson,
  resourceListOf,
  subtractNonNegative,
  withoutZeros,
  type ResourceList,
} from '../quota/resources.js';
import { StoreError } from '../store/types.js';
import type { AdmissionAttributes, ValidatingPlugin } from './types.js';

/** Rounds of reading conflicting quotas again before a batch's pending writes fail with the conflict (kube tries 3 times; several processes share a store here). */
const QUOTA_ATTEMPTS = 8;

interface Waiter {
  readonly a: AdmissionAttributes;
  readonly e: Evaluator;
  /** 'pending' until a write that carries its charge succeeded (kube's default deny). */
  result: 'pending' | 'ok' | Error;
  readonly done: (err?: Error) => void;
}

/** One quota in a batch: the object read, its hard limits, its running usage. */
interface Running {
  readonly obj: KObject;
  readonly hard: ResourceList;
  readonly used: ResourceList;
}

const running = (obj: KObject): Running => ({ obj, hard: resourceListOf(record(obj, 'status')['hard']), used: resourceListOf(record(obj, 'status')['used']) });

export function resourceQuotaAdmission(): ValidatingPlugin {
  /** The waiters of each namespace not yet taken by its worker; a namespace is here while its worker runs. */
  const queues = new Map<string, Waiter[]>();

  /**
   * A batch starts a turn later, so the charges that reach admission meanwhile share its one status write (at
   * once, each create was a batch of its own and paid a quota write: docs/decisions/2026-11-29-quota-admission.md).
   */
  function nextBatch(namespace: string, env: CoreEnv): void {
    setImmediate(() => work(namespace, env));
  }

  function work(namespace: string, env: CoreEnv): void {
    const batch = queues.get(namespace)!;
    queues.set(namespace, []);
    void judge(env, namespace, batch)
      .catch((err: unknown) => {
        for (const w of batch) if (w.result === 'pending') w.result = err instanceof Error ? err : new Error(String(err));
      })
      .finally(() => {
        for (const w of batch) w.done(w.result === 'ok' ? undefined : w.result === 'pending' ? new Error('quota not charged') : w.result);
        if (queues.get(namespace)!.length > 0) nextBatch(namespace, env);
        else queues.delete(namespace);
      });
  }

  return {
    name: 'ResourceQuota',
    // Synchronous unless the namespace has a quota (the watch-fed cache says so) and the write is one quota charges.
    validate(a, env) {
      const r = a.resource;
      if (a.namespace === '' || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      if (a.subresource !== '' && !(r.group === '' && r.resource === 'pods' && a.subresource === 'resize')) return;
      if (!env.namespacePolicies?.hasQuotas(a.namespace) || quotaIgnores(r.group, r.resource) || !a.object) return;
      const e = evaluatorFor(r.group, r.resource);
      if (!e.handles(a.operation, a.subresource)) return;
      // None of the namespace's quotas tracks the kind (by the cache): nothing to charge, no store read.
      if (!env.namespacePolicies.resourceQuotas(a.namespace).some((q) => tracks(e, q))) return;
      return new Promise<void>((resolve, reject) => {
        const w: Waiter = { a, e, result: 'pending', done: (err) => (err ? reject(err) : resolve()) };
        const q = queues.get(a.namespace);
        if (q) q.push(w);
        else {
          queues.set(a.namespace, [w]);
          // A batch serves many requests: its store calls are not one recorded request's spans (tracedenv.ts).
          const base = env.trace ? (Object.getPrototypeOf(env) as CoreEnv) : env;
          nextBatch(a.namespace, base);
        }
      });
    },
  };
}

/** Whether the quota's hard limits (as filled, or as asked while the controller has not filled them) name a resource of the kind. */
function tracks(e: Evaluator, q: KObject): boolean {
  return e.matchingResources([...Object.keys(record(q, 'status', 'hard')), ...Object.keys(record(q, 'spec', 'hard'))]).length > 0;
}

async function readQuotas(env: CoreEnv, namespace: string): Promise<KObject[]> {
  const t = env.registry.lookup('', 'v1', 'resourcequotas');
  if (!t) return [];
  return (await env.store.list(listPrefix(t, namespace))).items;
}

async function judge(env: CoreEnv, namespace: string, batch: Waiter[]): Promise<void> {
  // The quotas as stored now (not the cache): a charge is made on the latest usage.
  const quotas = await readQuotas(env, namespace);
  if (quotas.length === 0) {
    for (const w of batch) w.result = 'ok';
    return;
  }
  await checkQuotas(env, quotas.map(running), batch, QUOTA_ATTEMPTS);
}

/** kube's checkQuotas: each waiter against the running usage, then one write per changed quota; conflicting ones read again and judged again. */
async function checkQuotas(env: CoreEnv, quotas: Running[], batch: Waiter[], attemptsLeft: number): Promise<void> {
  const original = quotas;
  let anyChanged = false;
  // Each round decides anew for the waiters given it (a charge whose write conflicted is made again).
  for (const w of batch) w.result = 'pending';
  for (const w of batch) {
    let next: Running[];
    try {
      next = checkRequest(quotas, w.a, w.e, env.clock());
    } catch (err) {
      w.result = err instanceof Error ? err : new Error(String(err));
      continue;
    }
    if (w.a.dryRun) {
      w.result = 'ok';
      continue;
    }
    const changed = next.some((q, i) => !listsEqual(q.used, quotas[i]!.used));
    if (!changed) w.result = 'ok';
    anyChanged ||= changed;
    quotas = next;
  }
  if (!anyChanged) return;
  const failed = new Set<string>();
  let lastErr: Error | undefined;
  const t = env.registry.lookup('', 'v1', 'resourcequotas')!;
  for (let i = 0; i < quotas.length; i++) {
    const q = quotas[i]!;
    if (listsEqual(original[i]!.used, q.used)) continue;
    const cur = q.obj;
    const meta = cur.metadata;
    const status = { ...record(cur, 'status'), used: resourceListJson(q.used) };
    const next = prepareUpdate(t, { ...cur, status }, cur, 'status', undefined, env.clock());
    if (!next) continue;
    try {
      await env.store.update(objectKey(t, meta.namespace ?? '', meta.name ?? ''), next, Number(meta.resourceVersion));
    } catch (err) {
      failed.add(meta.name ?? '');
      lastErr =
        err instanceof StoreError && err.code === 'conflict'
          ? conflict(
              { group: '', resource: 'resourcequotas' },
              meta.name ?? '',
              'the object has been modified; please apply your changes to the latest version and try again',
            )
          : err instanceof Error
            ? err
            : new Error(String(err));
    }
  }
  if (failed.size === 0) {
    for (const w of batch) if (w.result === 'pending') w.result = 'ok';
    return;
  }
  if (attemptsLeft <= 1) {
    for (const w of batch) if (w.result === 'pending') w.result = lastErr!;
    return;
  }
  // The quotas whose write conflicted, as stored now; one deleted meanwhile is no longer charged.
  const fresh = (await readQuotas(env, quotas[0]!.obj.metadata.namespace ?? '')).filter((q) => failed.has(q.metadata.name ?? ''));
  // Refused waiters stay refused (never charged); the others are judged against the quotas whose write failed.
  await checkQuotas(
    env,
    fresh.map(running),
    batch.filter((w) => !(w.result instanceof Error)),
    attemptsLeft - 1,
  );
}

function refuse(a: AdmissionAttributes, why: string): StatusError {
  return forbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, why);
}

/** kube's CheckRequest: the quotas as they would be with this write charged, or its refusal. */
function checkRequest(quotas: Running[], a: AdmissionAttributes, e: Evaluator, now: number): Running[] {
  const obj = a.object!;
  const interesting: number[] = [];
  quotas.forEach((q, i) => {
    const hardNames = [...q.hard.keys()];
    if (!quotaMatches(e, q.obj, hardNames, obj)) return;
    const restricted = e.matchingResources(hardNames);
    const why = e.constraints(restricted, obj);
    if (why) throw refuse(a, `failed quota: ${q.obj.metadata.name ?? ''}: ${why}`);
    if (restricted.some((r) => !q.used.has(r)))
      throw refuse(a, `status unknown for quota: ${q.obj.metadata.name ?? ''}, resources: ${[...restricted].sort().join(',')}`);
    interesting.push(i);
  });
  if (interesting.length === 0) return quotas;
  const input = e.usage(obj, now);
  const negative = negativeNames(input);
  if (negative.length > 0) throw refuse(a, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);
  const deltas = new Map<number, ResourceList>(interesting.map((i) => [i, input]));
  if (a.operation === 'UPDATE') {
    const old = a.oldObject;
    if (!old) throw refuse(a, 'unable to get previous usage since prior version of object was not found');
    // Only a real update is charged the difference; a create through update is charged in full.
    if (old.metadata.resourceVersion) {
      const delta = subtractNonNegative(input, e.usage(old, now));
      for (const i of interesting) if (quotaMatches(e, quotas[i]!.obj, [...quotas[i]!.hard.keys()], old)) deltas.set(i, delta);
    }
  }
  for (const [i, d] of deltas) {
    const nonZero = withoutZeros(d);
    if (nonZero.size === 0) deltas.delete(i);
    else deltas.set(i, nonZero);
  }
  if (deltas.size === 0) return quotas;
  const out = [...quotas];
  for (const [i, delta] of deltas) {
    const q = quotas[i]!;
    const requested = mask(delta, q.hard.keys());
    const used = addLists(q.used, requested);
    if (a.subresource !== 'status') {
      const exceeded = exceededNames(mask(used, requested.keys()), q.hard);
      if (exceeded.length > 0)
        throw refuse(
          a,
          `exceeded quota: ${q.obj.metadata.name ?? ''}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(q.used, exceeded))}, limited: ${prettyPrint(mask(q.hard, exceeded))}`,
        );
    }
    out[i] = { ...q, used };
  }
  return out;
}
