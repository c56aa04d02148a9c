// kube's quota evaluators (pkg/quota/v1/evaluator/core and generic): what an
// object charges to a quota, which quota resources a kind answers for, which
// scopes it matches, and the pod's "must specify" constraint. Pods, Services
// and PersistentVolumeClaims have their own; every other kind is counted as
// `count/<resource>[.<group>]`, with the legacy names of configmaps, secrets,
// replicationcontrollers and resourcequotas.
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { compareAmounts, countQuantity, readQuantity, type Quantity } from '../../../lib/registry/builtins/quantities.js';
import { list, record, str } from '../../../lib/registry/fields.js';
import { addLists, resourceListOf, type ResourceList } from './resources.js';

export interface ScopeSelector {
  readonly scopeName: string;
  readonly operator: string;
  readonly values: readonly string[];
}

export interface Evaluator {
  readonly group: string;
  readonly resource: string;
  /** Whether a write of this kind with this operation and subresource can change usage (Handles). */
  handles(operation: string, subresource: string): boolean;
  /** The quota resource names among `names` this kind answers for (MatchingResources). */
  matchingResources(names: Iterable<string>): string[];
  matchesScope(s: ScopeSelector, obj: KObject): boolean;
  /** What the object charges (Usage); `now` for pods past their deletion grace. */
  usage(obj: KObject, now: number): ResourceList;
  /** Why the object may not be admitted under a quota tracking `required` (Constraints); undefined = it may. */
  constraints(required: readonly string[], obj: KObject): string | undefined;
}

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise (ObjectCountQuotaResourceNameFor). */
export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

/** The group and resource a `count/…` name counts, or undefined. */
export function countedResource(name: string): { group: string; resource: string } | undefined {
  if (!name.startsWith('count/')) return undefined;
  const gr = name.slice('count/'.length);
  const dot = gr.indexOf('.');
  return dot < 0 ? { group: '', resource: gr } : { group: gr.slice(dot + 1), resource: gr.slice(0, dot) };
}

/** The quota's scopes and scope selector, as one list (getScopeSelectorsFromQuota). */
export function scopeSelectorsOf(quota: KObject): ScopeSelector[] {
  const out: ScopeSelector[] = [];
  for (const s of list(quota, 'spec', 'scopes')) if (typeof s === 'string') out.push({ scopeName: s, operator: 'Exists', values: [] });
  for (const m of list(quota, 'spec', 'scopeSelector', 'matchExpressions')) {
    if (!isPlainObject(m)) continue;
    out.push({ scopeName: str(m, 'scopeName'), operator: str(m, 'operator'), values: list(m, 'values').filter((v): v is string => typeof v === 'string') });
  }
  return out;
}

const intersect = (names: Iterable<string>, known: ReadonlySet<string>) => [...names].filter((n) => known.has(n));

function objectCount(group: string, resource: string, alias?: string): Evaluator {
  const countName = objectCountName(group, resource);
  const names = new Set(alias ? [countName, alias] : [countName]);
  return {
    group,
    resource,
    handles: (op) => op === 'CREATE',
    matchingResources: (input) => intersect(input, names),
    matchesScope: () => false,
    usage: () => new Map([...names].map((n) => [n, countQuantity(1)])),
    constraints: () => undefined,
  };
}

// ---- Pods

const POD_RESOURCES = new Set([
  'count/pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
]);
/** kube's historical mistake, kept: a quota on these makes every container state them. */
const MUST_SPECIFY = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);
const NATIVE = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');
/** helper.IsExtendedResourceName: qualified outside kubernetes.io and not `requests.`-prefixed. */
const isExtended = (name: string) => !NATIVE(name) && !name.startsWith('requests.');

function containerResources(c: unknown): { requests: ResourceList; limits: ResourceList } {
  const res = record(c, 'resources');
  return { requests: resourceListOf(res['requests']), limits: resourceListOf(res['limits']) };
}

function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, q] of b) {
    const cur = out.get(k);
    if (!cur || compare(q, cur) > 0) out.set(k, q);
  }
  return out;
}

const compare = (a: Quantity, b: Quantity): number => compareAmounts(a.amount, b.amount);

/** resourcehelper.PodRequests / PodLimits: the containers' sum, at least each init container's (with the sidecars before it), plus overhead. */
export function podResources(pod: KObject, which: 'requests' | 'limits'): ResourceList {
  let total: ResourceList = new Map();
  for (const c of list(pod, 'spec', 'containers')) total = addLists(total, containerResources(c)[which]);
  let sidecars: ResourceList = new Map();
  let init: ResourceList = new Map();
  for (const c of list(pod, 'spec', 'initContainers')) {
    const own = containerResources(c)[which];
    if (str(c, 'restartPolicy') === 'Always') {
      total = addLists(total, own);
      sidecars = addLists(sidecars, own);
      init = maxLists(init, sidecars);
    } else {
      init = maxLists(init, addLists(own, sidecars));
    }
  }
  total = maxLists(total, init);
  const overhead = resourceListOf(record(pod, 'spec')['overhead']);
  if (which === 'requests') return addLists(total, overhead);
  for (const [k, q] of overhead) if (total.has(k)) total = addLists(total, new Map([[k, q]]));
  return total;
}

/** podComputeUsageHelper. */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', countQuantity(1)]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [k, q] of requests) {
    if (k.startsWith('hugepages-')) {
      out.set(k, q);
      out.set(`requests.${k}`, q);
    }
    if (isExtended(k)) out.set(`requests.${k}`, q);
  }
  return out;
}

function podCharged(pod: KObject, now: number): boolean {
  const phase = str(pod, 'status', 'phase');
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const meta = pod.metadata;
  if (meta.deletionTimestamp && typeof meta.deletionGracePeriodSeconds === 'number') {
    if (now > Date.parse(meta.deletionTimestamp) + meta.deletionGracePeriodSeconds * 1000) return false;
  }
  return true;
}

function positive(l: ResourceList, name: string): boolean {
  const q = l.get(name);
  return q !== undefined && q.amount.n > 0n;
}

/** qos.GetPodQOS(pod) == BestEffort: no container requests or limits cpu or memory. */
function bestEffort(pod: KObject): boolean {
  for (const c of [...list(pod, 'spec', 'containers'), ...list(pod, 'spec', 'initContainers')]) {
    const { requests, limits } = containerResources(c);
    for (const r of ['cpu', 'memory']) if (positive(requests, r) || positive(limits, r)) return false;
  }
  return true;
}

function crossNamespaceAffinity(pod: KObject): boolean {
  const terms = (kind: string) => [
    ...list(pod, 'spec', 'affinity', kind, 'requiredDuringSchedulingIgnoredDuringExecution'),
    ...list(pod, 'spec', 'affinity', kind, 'preferredDuringSchedulingIgnoredDuringExecution').map((w) => record(w, 'podAffinityTerm')),
  ];
  return [...terms('podAffinity'), ...terms('podAntiAffinity')].some((t) => list(t, 'namespaces').length > 0 || isPlainObject(record(t)['namespaceSelector']));
}

/** A scope selector over one value (absent = no such label), as a label selector over `{scopeName: value}`. */
function selects(s: ScopeSelector, value: string | undefined): boolean {
  switch (s.operator) {
    case 'In':
      return value !== undefined && s.values.includes(value);
    case 'NotIn':
      return value === undefined || !s.values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      return false;
  }
}

const pods: Evaluator = {
  group: '',
  resource: 'pods',
  handles: (op, sub) => (sub === '' && op === 'CREATE') || (sub === 'resize' && op === 'UPDATE'),
  matchingResources(input) {
    return [...input].filter(
      (n) => POD_RESOURCES.has(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || (!NATIVE(n) && n.startsWith('requests.')),
    );
  },
  matchesScope(s, pod) {
    const deadline = record(pod, 'spec')['activeDeadlineSeconds'];
    const terminating = typeof deadline === 'number' && deadline >= 0;
    switch (s.scopeName) {
      case 'Terminating':
        return terminating;
      case 'NotTerminating':
        return !terminating;
      case 'BestEffort':
        return bestEffort(pod);
      case 'NotBestEffort':
        return !bestEffort(pod);
      case 'PriorityClass': {
        const pc = str(pod, 'spec', 'priorityClassName');
        return selects(s, pc === '' ? undefined : pc);
      }
      case 'CrossNamespacePodAffinity':
        return crossNamespaceAffinity(pod);
      default:
        return false;
    }
  },
  usage(pod, now) {
    const base: ResourceList = new Map([['count/pods', countQuantity(1)]]);
    if (!podCharged(pod, now)) return base;
    return addLists(base, computeUsage(podResources(pod, 'requests'), podResources(pod, 'limits')));
  },
  constraints(required, pod) {
    const wanted = required.filter((r) => MUST_SPECIFY.has(r));
    if (wanted.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    for (const c of [...list(pod, 'spec', 'containers'), ...list(pod, 'spec', 'initContainers')]) {
      const { requests, limits } = containerResources(c);
      const has = computeUsage(requests, limits);
      for (const r of wanted) {
        if (has.has(r)) continue;
        const names = missing.get(r) ?? new Set<string>();
        names.add(str(c, 'name'));
        missing.set(r, names);
      }
    }
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
};

// ---- Services

const SERVICE_RESOURCES = new Set(['count/services', 'services', 'services.loadbalancers', 'services.nodeports']);

const services: Evaluator = {
  group: '',
  resource: 'services',
  handles: (op, sub) => sub === '' && (op === 'CREATE' || op === 'UPDATE'),
  matchingResources: (input) => intersect(input, SERVICE_RESOURCES),
  matchesScope: () => false,
  usage(svc) {
    const ports = list(svc, 'spec', 'ports');
    const out: ResourceList = new Map([
      ['count/services', countQuantity(1)],
      ['services', countQuantity(1)],
      ['services.loadbalancers', countQuantity(0)],
      ['services.nodeports', countQuantity(0)],
    ]);
    const type = str(svc, 'spec', 'type');
    if (type === 'NodePort') out.set('services.nodeports', countQuantity(ports.length));
    if (type === 'LoadBalancer') {
      // With node ports suppressed only the ports that name one are counted.
      const suppressed = record(svc, 'spec')['allocateLoadBalancerNodePorts'] === false;
      out.set(
        'services.nodeports',
        countQuantity(suppressed ? ports.filter((p) => typeof record(p)['nodePort'] === 'number' && record(p)['nodePort'] !== 0).length : ports.length),
      );
      out.set('services.loadbalancers', countQuantity(1));
    }
    return out;
  },
  constraints: () => undefined,
};

// ---- PersistentVolumeClaims

const PVC_RESOURCES = new Set(['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage']);
const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

function storageClassOf(pvc: KObject): string {
  const fromSpec = record(pvc, 'spec')['storageClassName'];
  if (typeof fromSpec === 'string') return fromSpec;
  const ann = pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'];
  return typeof ann === 'string' ? ann : '';
}

const pvcs: Evaluator = {
  group: '',
  resource: 'persistentvolumeclaims',
  handles: (op, sub) => sub === '' && (op === 'CREATE' || op === 'UPDATE'),
  matchingResources(input) {
    return [...input].filter(
      (n) =>
        PVC_RESOURCES.has(n) ||
        (n.includes(STORAGE_CLASS_SUFFIX) &&
          (n.endsWith(`${STORAGE_CLASS_SUFFIX}requests.storage`) || n.endsWith(`${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`))),
    );
  },
  matchesScope(s, pvc) {
    if (s.scopeName !== 'VolumeAttributesClass') return false;
    const vac = str(pvc, 'spec', 'volumeAttributesClassName');
    return selects(s, vac === '' ? undefined : vac);
  },
  usage(pvc) {
    const out: ResourceList = new Map([
      ['persistentvolumeclaims', countQuantity(1)],
      ['count/persistentvolumeclaims', countQuantity(1)],
    ]);
    const sc = storageClassOf(pvc);
    if (sc) out.set(`${sc}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, countQuantity(1));
    const requested = readQuantity(record(pvc, 'spec', 'resources', 'requests')['storage']);
    const allocated = readQuantity(record(pvc, 'status', 'allocatedResources')['storage']);
    const storage = requested && allocated ? (compare(allocated, requested) > 0 ? allocated : requested) : requested;
    if (storage) {
      out.set('requests.storage', storage);
      if (sc) out.set(`${sc}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
    }
    return out;
  },
  constraints: () => undefined,
};

/** Object-count evaluators with a legacy name beside `count/…`. */
const LEGACY_COUNTS: Readonly<Record<string, string>> = {
  configmaps: 'configmaps',
  secrets: 'secrets',
  replicationcontrollers: 'replicationcontrollers',
  resourcequotas: 'resourcequotas',
};

const counts = new Map<string, Evaluator>();

/** The evaluator of a group resource (a generic object count unless kube has one of its own). */
export function evaluatorFor(group: string, resource: string): Evaluator {
  if (group === '') {
    if (resource === 'pods') return pods;
    if (resource === 'services') return services;
    if (resource === 'persistentvolumeclaims') return pvcs;
  }
  const key = `${resource}.${group}`;
  let e = counts.get(key);
  if (!e) {
    e = objectCount(group, resource, group === '' && Object.hasOwn(LEGACY_COUNTS, resource) ? LEGACY_COUNTS[resource] : undefined);
    counts.set(key, e);
  }
  return e;
}

/** Kinds quota never charges: not stored, or never quota-ed (kube's ignored resources). */
const IGNORED = new Set([
  '.bindings',
  '.componentstatuses',
  'authentication.k8s.io.tokenreviews',
  'authorization.k8s.io.localsubjectaccessreviews',
  'authorization.k8s.io.selfsubjectaccessreviews',
  'authorization.k8s.io.selfsubjectrulesreviews',
  'authorization.k8s.io.subjectaccessreviews',
  '.events',
  'events.k8s.io.events',
]);

export function quotaIgnores(group: string, resource: string): boolean {
  return IGNORED.has(`${group}.${resource}`);
}

/** The evaluators a quota with these hard resource names needs, for the kinds `served` says are stored (the controller's registry). */
export function evaluatorsFor(hard: Iterable<string>, served: (group: string, resource: string) => boolean): Evaluator[] {
  const out = new Map<string, Evaluator>();
  const names = [...hard];
  for (const e of [pods, services, pvcs, ...Object.keys(LEGACY_COUNTS).map((r) => evaluatorFor('', r))])
    if (e.matchingResources(names).length > 0) out.set(`${e.resource}.${e.group}`, e);
  for (const n of names) {
    const gr = countedResource(n);
    if (gr && !quotaIgnores(gr.group, gr.resource) && served(gr.group, gr.resource)) out.set(`${gr.resource}.${gr.group}`, evaluatorFor(gr.group, gr.resource));
  }
  return [...out.values()];
}

/** Whether every scope selects the object, and some hard resource is the evaluator's (generic.Matches). */
export function quotaMatches(e: Evaluator, quota: KObject, hard: readonly string[], obj: KObject): boolean {
  if (e.matchingResources(hard).length === 0) return false;
  return scopeSelectorsOf(quota).every((s) => e.matchesScope(s, obj));
}
