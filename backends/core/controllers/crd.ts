// The CustomResourceDefinition controllers of kube's apiextensions-apiserver
// and kube-aggregator, in one serialized pass over every CRD:
// - naming (`NamesAccepted`): a CRD's names are accepted unless another CRD of
//   its group (or a built-in type of the group) already holds one of them;
//   kube's reasons PluralConflict, SingularConflict, ShortNamesConflict,
//   KindConflict, ListKindConflict; accepted names go to status.acceptedNames;
// - establishing (`Established`, reason InitialNamesAccepted) once names are accepted:
//   the registry sync (lib/crd/registrysync.ts) serves Established CRDs only;
// - finalizing (`customresourcecleanup.apiextensions.k8s.io`, added by DELETE with
//   the `Terminating` condition): deletes every custom resource of the CRD, then
//   drops the finalizer, so the CRD goes;
// - crdregistration: one local APIService (label
//   `kube-aggregator.kubernetes.io/automanaged: "true"`, priorities 1000/100) per
//   served group version, deleted when no CRD serves it any more.
// Every process sharing a store runs it; writes are compare-and-swap, so two
// passes that race write the same thing once.
import { rfc3339, type KObject } from '../../../lib/api/meta.js';
import { at, list, sameJson, str, strings } from '../../../lib/registry/fields.js';
import type { Registry } from '../../../lib/registry/index.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { StatusCause } from '../../../lib/api/status.js';
import { isEstablished, nonStructuralCauses, olderFirst } from '../../../lib/registry/builtins/crd-validation.js';
import { nonStructuralCausesOffLoop } from '../../../lib/registry/builtins/crd-offloop.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { isFinalized, prepareCreate, prepareUpdate } from '../objects.js';
import { guaranteedUpdate, StoreError } from '../store/types.js';
import { AUTOMANAGED_LABEL, localApiServiceName } from './autoregister.js';
import { deleteStored, WatchingController } from './loop.js';

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
const CRD_GROUP = 'apiextensions.k8s.io';
const CRD_GROUP_PRIORITY = 1000;
const CRD_VERSION_PRIORITY = 100;

type Json = Record<string, unknown>;
interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

export function isCrdType(t: ResourceType): boolean {
  return t.group === CRD_GROUP && t.plural === 'customresourcedefinitions';
}

/** Sets a condition, keeping lastTransitionTime when the status did not change (SetCRDCondition). */
function withCondition(conds: readonly unknown[], c: Condition, now: number): Json[] {
  const out = conds.filter((x): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x)).map((x) => ({ ...x }));
  const i = out.findIndex((x) => x['type'] === c.type);
  const old = i >= 0 ? out[i]! : undefined;
  const next: Json = {
    ...c,
    lastTransitionTime: old && old['status'] === c.status && typeof old['lastTransitionTime'] === 'string' ? old['lastTransitionTime'] : rfc3339(now),
  };
  if (i >= 0) out[i] = next;
  else out.push(next);
  return out;
}

/** What a first DELETE of a CRD writes besides deletionTimestamp (kube's CRD REST Delete). */
export function markCrdTerminating(crd: KObject, now: number): KObject {
  const fins = crd.metadata.finalizers ?? [];
  const status = (at(crd, 'status') ?? {}) as Json;
  return {
    ...crd,
    metadata: { ...crd.metadata, finalizers: fins.includes(CRD_CLEANUP_FINALIZER) ? fins : [...fins, CRD_CLEANUP_FINALIZER] },
    status: {
      ...status,
      conditions: withCondition(
        list(status, 'conditions'),
        {
          type: 'Terminating',
          status: 'True',
          reason: 'InstanceDeletionPending',
          message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
        },
        now,
      ),
    },
  };
}

interface Names {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
}

function namesAt(o: unknown, ...path: string[]): Names {
  const n = at(o, ...path);
  return { plural: str(n, 'plural'), singular: str(n, 'singular'), kind: str(n, 'kind'), listKind: str(n, 'listKind'), shortNames: strings(n, 'shortNames') };
}

/** The names others hold in a group: other CRDs' accepted names and the group's built-in types. */
function takenNames(group: string, others: readonly KObject[], builtins: readonly ResourceType[]): { resources: Set<string>; kinds: Set<string> } {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const o of others) {
    if (str(o, 'spec', 'group') !== group) continue;
    const n = namesAt(o, 'status', 'acceptedNames');
    for (const r of [n.plural, n.singular, ...n.shortNames]) if (r) resources.add(r);
    for (const k of [n.kind, n.listKind]) if (k) kinds.add(k);
  }
  for (const t of builtins) {
    if (t.group !== group) continue;
    for (const r of [t.plural, t.singular, ...t.shortNames]) resources.add(r);
    kinds.add(t.kind);
    kinds.add(t.listKind);
  }
  return { resources, kinds };
}

/** kube's naming controller: the condition for the spec's names, given the names others hold. */
function namingCondition(spec: Names, taken: { resources: Set<string>; kinds: Set<string> }): Condition {
  const conflict = (reason: string, name: string): Condition => ({ type: 'NamesAccepted', status: 'False', reason, message: `"${name}" is already in use` });
  if (taken.resources.has(spec.plural)) return conflict('PluralConflict', spec.plural);
  if (taken.resources.has(spec.singular)) return conflict('SingularConflict', spec.singular);
  for (const s of spec.shortNames) if (taken.resources.has(s)) return conflict('ShortNamesConflict', s);
  if (taken.kinds.has(spec.kind)) return conflict('KindConflict', spec.kind);
  if (taken.kinds.has(spec.listKind)) return conflict('ListKindConflict', spec.listKind);
  return { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
}

/**
 * kube's nonstructuralschema controller: `NonStructuralSchema` True with the
 * violations while a stored schema is not structural (only legacy objects can
 * be: writes refuse new ones), removed once it is.
 */
function nonStructuralCondition(conds: Json[], causes: readonly StatusCause[], now: number): Json[] {
  if (causes.length === 0) return conds.filter((c) => c['type'] !== 'NonStructuralSchema');
  const errs = causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`);
  // field.ErrorList.ToAggregate().Error(): one error as it is, several in brackets.
  const message = errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
  return withCondition(conds, { type: 'NonStructuralSchema', status: 'True', reason: 'Violations', message }, now);
}

export class CrdController extends WatchingController {
  /**
   * Each CRD's structural violations, by uid, for the generation they were read at: a pass
   * looks at every CRD, and reading a schema (its patterns compiled) on every pass made one
   * CRD's change cost work proportional to all of them.
   */
  readonly #violations = new Map<string, { generation: number; causes: readonly StatusCause[] }>();
  /**
   * By uid, the revisions of a CRD and its group's CRDs at which its status was found right: a pass
   * after another CRD's change then computes nothing for it (a pass per change was work for every CRD).
   */
  readonly #settled = new Map<string, string>();

  constructor(
    env: CoreEnv,
    private readonly builtins: Registry,
  ) {
    super(env, 'customresourcedefinitions', [`${CRD_GROUP}/customresourcedefinitions/`]);
  }

  private type(resource: string, group: string): ResourceType {
    const t = this.builtins.lookup(group, 'v1', resource);
    if (!t) throw new Error(`the registry has no ${group}/v1 ${resource}`);
    return t;
  }

  protected async pass(): Promise<number | undefined> {
    const crdType = this.type('customresourcedefinitions', CRD_GROUP);
    const { items } = await this.env.store.list(listPrefix(crdType, ''));
    // Older first, as kube's queue meets them: of two CRDs claiming one name, the earlier gets it.
    const all = [...items].sort(olderFirst);
    const uids = new Set(all.map((c) => c.metadata.uid ?? ''));
    for (const uid of this.#violations.keys()) if (!uids.has(uid)) this.#violations.delete(uid);
    for (const uid of this.#settled.keys()) if (!uids.has(uid)) this.#settled.delete(uid);
    // Names conflict only within a group: each CRD is compared with its group's CRDs and built-ins,
    // so a pass costs the number of CRDs, not its square.
    const byGroup = new Map<string, number[]>();
    all.forEach((c, i) => {
      const g = str(c, 'spec', 'group');
      const at = byGroup.get(g);
      if (at) at.push(i);
      else byGroup.set(g, [i]);
    });
    const builtinsByGroup = new Map<string, ResourceType[]>();
    for (const t of this.builtins.all()) {
      const at = builtinsByGroup.get(t.group);
      if (at) at.push(t);
      else builtinsByGroup.set(t.group, [t]);
    }
    // A CRD's structural violations compile its patterns: found on the check worker, never on the event loop.
    for (const crd of all) await this.#readStructural(crd);
    let again = false;
    for (let i = 0; i < all.length; i++) {
      const crd = all[i]!;
      const group = str(crd, 'spec', 'group');
      // Read at use: later CRDs of this pass see the names this one was just given.
      const peers = () => (byGroup.get(group) ?? []).map((j) => all[j]!);
      if (crd.metadata.deletionTimestamp) again = (await this.finalize(crdType, crd)) || again;
      else all[i] = (await this.acceptNames(crdType, crd, peers, builtinsByGroup.get(group) ?? [])) ?? crd;
    }
    await this.registerApiServices();
    // Custom resources held by their own finalizers: look again later.
    return again ? this.env.clock() + 1000 : undefined;
  }

  /** Reads a CRD's structural violations off the event loop, once per uid and generation (#structural then finds them). */
  async #readStructural(crd: KObject): Promise<void> {
    const uid = crd.metadata.uid ?? '';
    const generation = crd.metadata.generation ?? 0;
    if (crd.metadata.deletionTimestamp || this.#violations.get(uid)?.generation === generation) return;
    try {
      this.#violations.set(uid, { generation, causes: await nonStructuralCausesOffLoop(crd) });
    } catch {
      // Over the check budget: its write passed the same checks, so it is taken as structural.
      this.#violations.set(uid, { generation, causes: [] });
    }
  }

  /** The structural violations of a CRD's schemas, read once per uid and generation. */
  #structural(crd: KObject): readonly StatusCause[] {
    const uid = crd.metadata.uid ?? '';
    const generation = crd.metadata.generation ?? 0;
    const known = this.#violations.get(uid);
    if (known?.generation === generation) return known.causes;
    const causes = nonStructuralCauses(crd);
    this.#violations.set(uid, { generation, causes });
    return causes;
  }

  /** The CRD with the status the naming controllers give it, or null when it already has it. */
  #named(crdType: ResourceType, cur: KObject, peers: readonly KObject[], builtins: readonly ResourceType[], now: number): KObject | null {
    const spec = namesAt(cur, 'spec', 'names');
    const others = peers.filter((o) => o.metadata.uid !== cur.metadata.uid);
    const naming = namingCondition(spec, takenNames(str(cur, 'spec', 'group'), others, builtins));
    const status = { ...((at(cur, 'status') ?? {}) as Json) };
    let conds = withCondition(list(status, 'conditions'), naming, now);
    if (naming.status === 'True') {
      status['acceptedNames'] = { ...((at(cur, 'spec', 'names') ?? {}) as Json) };
      conds = withCondition(
        conds,
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
        now,
      );
    } else if (!isEstablished(cur)) {
      status['acceptedNames'] = status['acceptedNames'] ?? { plural: '', kind: '' };
      conds = withCondition(conds, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
    }
    status['conditions'] = nonStructuralCondition(conds, this.#structural(cur), now);
    // Unchanged: no write, and no validation of the CRD (its schemas) for nothing.
    if (sameJson(status, at(cur, 'status') ?? {})) return null;
    return prepareUpdate(crdType, { ...cur, status }, cur, 'status') ?? null;
  }

  /** NamesAccepted, acceptedNames, Established. */
  private async acceptNames(
    crdType: ResourceType,
    crd: KObject,
    peers: () => readonly KObject[],
    builtins: readonly ResourceType[],
  ): Promise<KObject | undefined> {
    const now = this.env.clock();
    // Its status follows from it and its group's CRDs: when none changed since it was found right, nothing is computed.
    const uid = crd.metadata.uid ?? '';
    const seen = peers()
      .map((p) => `${p.metadata.uid}@${p.metadata.resourceVersion}`)
      .join(',');
    if (this.#settled.get(uid) === seen) return crd;
    // A CRD whose listed status is already right costs no store round trip: a pass touches only what changed.
    if (this.#named(crdType, crd, peers(), builtins, now) === null) {
      this.#settled.set(uid, seen);
      return crd;
    }
    const key = objectKey(crdType, '', crd.metadata.name ?? '');
    return guaranteedUpdate(this.env.store, key, (cur) => {
      if (cur.metadata.uid !== crd.metadata.uid || cur.metadata.deletionTimestamp) return null;
      return this.#named(crdType, cur, peers(), builtins, now);
    });
  }

  /** Deletes the CRD's objects; when none is left, drops the cleanup finalizer. True = objects remain. */
  private async finalize(crdType: ResourceType, crd: KObject): Promise<boolean> {
    if (!(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return false;
    const group = str(crd, 'spec', 'group');
    const plural = str(crd, 'spec', 'names', 'plural');
    const namespaced = str(crd, 'spec', 'scope') === 'Namespaced';
    // The store keys of custom resources depend on group, plural and scope only: no served type is needed.
    const t = { group, plural, namespaced } as ResourceType;
    const { items } = await this.env.store.list(listPrefix(t, ''));
    for (const obj of items) await deleteStored(this.env, t, obj);
    const left = items.length === 0 ? 0 : (await this.env.store.list(listPrefix(t, ''), { limit: 1 })).items.length;
    const now = this.env.clock();
    const key = objectKey(crdType, '', crd.metadata.name ?? '');
    if (left > 0) {
      await guaranteedUpdate(this.env.store, key, (cur) => {
        if (cur.metadata.uid !== crd.metadata.uid) return null;
        const status = { ...((at(cur, 'status') ?? {}) as Json) };
        status['conditions'] = withCondition(
          list(status, 'conditions'),
          { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: `CustomResource deletion is in progress` },
          now,
        );
        return prepareUpdate(crdType, { ...cur, status }, cur, 'status') ?? null;
      });
      return true;
    }
    let finalized = false;
    const out = await guaranteedUpdate(this.env.store, key, (cur) => {
      if (cur.metadata.uid !== crd.metadata.uid) return null;
      const finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
      const next: KObject = { ...cur, metadata: { ...cur.metadata, finalizers } };
      if (finalizers.length === 0) delete next.metadata.finalizers;
      finalized = isFinalized(next);
      return next;
    });
    if (finalized && out) {
      try {
        await this.env.store.delete(key, Number(out.metadata.resourceVersion));
      } catch (err) {
        if (!(err instanceof StoreError && (err.code === 'not-found' || err.code === 'conflict'))) throw err;
      }
    }
    return false;
  }

  /** kube-aggregator's crdregistration: a local APIService per group version an Established CRD serves. */
  private async registerApiServices(): Promise<void> {
    const crdType = this.type('customresourcedefinitions', CRD_GROUP);
    const apiType = this.type('apiservices', 'apiregistration.k8s.io');
    const { items: crds } = await this.env.store.list(listPrefix(crdType, ''));
    const wanted = new Map<string, { group: string; version: string }>();
    for (const crd of crds) {
      if (!isEstablished(crd)) continue;
      const group = str(crd, 'spec', 'group');
      for (const v of list(crd, 'spec', 'versions')) {
        if (at(v, 'served') !== true) continue;
        const gv = { group, version: str(v, 'name') };
        wanted.set(localApiServiceName(gv), gv);
      }
    }
    const { items: services } = await this.env.store.list(listPrefix(apiType, ''));
    const have = new Map(services.map((s) => [s.metadata.name ?? '', s]));
    const now = this.env.clock();
    for (const [name, gv] of wanted) {
      if (have.has(name)) continue;
      const obj: KObject = {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name, labels: { [AUTOMANAGED_LABEL]: 'true' } },
        spec: { group: gv.group, version: gv.version, groupPriorityMinimum: CRD_GROUP_PRIORITY, versionPriority: CRD_VERSION_PRIORITY },
      };
      const key = objectKey(apiType, '', name);
      try {
        const created = await this.env.store.create(key, prepareCreate(apiType, obj, now));
        const status = {
          conditions: [
            { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available', lastTransitionTime: rfc3339(now) },
          ],
        };
        const next = prepareUpdate(apiType, { ...created, status }, created, 'status');
        if (next) await this.env.store.update(key, next, Number(created.metadata.resourceVersion));
      } catch (err) {
        if (!(err instanceof StoreError && (err.code === 'exists' || err.code === 'conflict'))) throw err;
      }
    }
    for (const s of services) {
      const name = s.metadata.name ?? '';
      if (wanted.has(name) || s.metadata.labels?.[AUTOMANAGED_LABEL] !== 'true') continue;
      try {
        await this.env.store.delete(objectKey(apiType, '', name), Number(s.metadata.resourceVersion));
      } catch (err) {
        if (!(err instanceof StoreError && (err.code === 'not-found' || err.code === 'conflict'))) throw err;
      }
    }
  }
}
