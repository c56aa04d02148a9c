// The create path (lib/fieldmanager/create.ts) against the general update
// algorithm it replaces: the same managedFields, key order included, for
// built-in kinds with their schemas, objects without a schema, nulls, empty
// values, duplicate and keyless list items, a made-up schema reaching the
// rarer baseline cases, random objects of every kind, and the first update
// after a create.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trackCreate, trackCreateGeneral, trackUpdate, type WriteContext } from '../../lib/fieldmanager/index.js';
import { builtinRegistry } from '../../lib/registry/index.js';
import { apiVersionOf, type ResourceType } from '../../lib/registry/types.js';
import type { KObject } from '../../lib/api/meta.js';
import { SchemaModel, type Node, type StructNode } from '../../lib/schema/model.js';
import { PACKAGES } from '../../lib/schema/gen/index.js';
import { isDeepFrozen } from '../helpers/frozen.js';

const reg = builtinRegistry();
const NOW = Date.parse('2025-06-01T12:00:00Z');

function typeOf(group: string, version: string, kind: string): ResourceType {
  const t = reg.byKind(group, version, kind);
  assert.ok(t, `${group}/${version} ${kind}`);
  return t;
}

function context(node: Node | undefined, apiVersion: string, subresource = ''): WriteContext {
  return { manager: 'kubectl-create', apiVersion, subresource, now: NOW, node };
}

const clone = <T>(v: T): T => structuredClone(v);

/** Both paths over copies of `obj`; asserts they agree and returns the new path's managedFields. */
function same(obj: unknown, c: WriteContext, what = ''): unknown {
  const fast = clone(obj) as KObject;
  const general = clone(obj) as KObject;
  const thrown = [attempt(() => trackCreate(fast, c)), attempt(() => trackCreateGeneral(general, c))];
  assert.deepEqual(thrown[0], thrown[1], what);
  const a = (fast.metadata as { managedFields?: unknown } | undefined)?.managedFields;
  const b = (general.metadata as { managedFields?: unknown } | undefined)?.managedFields;
  assert.deepEqual(a, b, what);
  assert.equal(JSON.stringify(a), JSON.stringify(b), what);
  const has = (o: KObject) => typeof o.metadata === 'object' && o.metadata !== null && 'managedFields' in o.metadata;
  assert.equal(has(fast), has(general), what);
  if (a !== undefined) assert.ok(isDeepFrozen(a), `${what}: managedFields not deep-frozen`);
  return a;
}

/** The error's class and message, '' when none. */
function attempt(f: () => void): string {
  try {
    f();
    return '';
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  }
}

function sameFor(t: ResourceType, obj: Record<string, unknown>): unknown {
  return same({ apiVersion: apiVersionOf(t), kind: t.kind, ...obj }, context(t.schema, apiVersionOf(t)), t.kind);
}

const meta = (extra: Record<string, unknown> = {}) => ({
  name: 'x',
  namespace: 'default',
  uid: '6a1b',
  resourceVersion: '7',
  creationTimestamp: '2025-06-01T12:00:00Z',
  generation: 1,
  ...extra,
});

const POD = typeOf('', 'v1', 'Pod');

const realisticPod = {
  metadata: meta({
    labels: { app: 'web', tier: 'fe' },
    annotations: { 'example.com/note': 'x' },
    finalizers: ['a/b', 'c/d'],
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true }],
  }),
  spec: {
    initContainers: [{ name: 'init', image: 'busybox', command: ['sh', '-c', 'true'] }],
    containers: [
      {
        name: 'app',
        image: 'nginx:1.25',
        args: ['-g', 'daemon off;'],
        ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP', name: 'dns' }, { containerPort: 53, name: 'dns-tcp' }],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'C', value: '' },
        ],
        envFrom: [{ configMapRef: { name: 'cm' } }],
        volumeMounts: [
          { name: 'data', mountPath: '/data' },
          { name: 'cfg', mountPath: '/etc/cfg', readOnly: true },
        ],
        resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m' } },
        livenessProbe: { httpGet: { path: '/healthz', port: 80, httpHeaders: [{ name: 'X', value: 'y' }] }, initialDelaySeconds: 3 },
        readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 5 },
        securityContext: { runAsNonRoot: true, runAsUser: 1000, capabilities: { drop: ['ALL'], add: [] }, readOnlyRootFilesystem: true },
        lifecycle: { preStop: { exec: { command: ['sleep', '5'] } } },
      },
      { name: 'side', image: 'busybox', command: ['sleep', 'inf'], stdin: false },
    ],
    volumes: [
      { name: 'data', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'cm', items: [{ key: 'a', path: 'a' }] } },
    ],
    restartPolicy: 'Always',
    nodeSelector: { disk: 'ssd' },
    dnsPolicy: 'ClusterFirst',
    tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }] },
      },
    },
    imagePullSecrets: [{ name: 'reg' }],
    securityContext: {},
  },
  status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }], podIPs: [{ ip: '10.0.0.1' }] },
};

test('a realistic Pod: containers by name, ports by containerPort and defaulted protocol, probes, status', () => {
  const mf = sameFor(POD, realisticPod) as Array<{ fieldsV1: Record<string, Record<string, unknown>> }>;
  // The entry kube writes: no `.` on spec (the baseline's empty struct), `.` on each container.
  const spec = mf[0]!.fieldsV1['f:spec']!;
  assert.equal('.' in spec, false);
  const app = (spec['f:containers'] as Record<string, Record<string, Record<string, unknown>>>)['k:{"name":"app"}']!;
  assert.ok('.' in app);
  assert.deepEqual(Object.keys(app['f:ports']!), [
    '.',
    'k:{"containerPort":53,"protocol":"TCP"}',
    'k:{"containerPort":53,"protocol":"UDP"}',
    'k:{"containerPort":80,"protocol":"TCP"}',
  ]);
  assert.deepEqual(Object.keys(mf[0]!), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
  assert.equal('f:name' in (mf[0]!.fieldsV1['f:metadata'] ?? {}), false);
});

test('Pods: empty, null, and oddly typed spec parts', () => {
  const cases: Array<Record<string, unknown>> = [
    { metadata: meta() },
    { metadata: meta(), spec: {} },
    { metadata: meta(), spec: null },
    { metadata: meta(), spec: { containers: null } },
    { metadata: meta(), spec: { containers: [] } },
    { metadata: meta(), spec: { containers: [{ name: 'a' }] } },
    { metadata: meta(), spec: { containers: [{ name: 'a', ports: [], env: null, resources: {} }] } },
    { metadata: meta(), spec: { containers: 'nope' } },
    { metadata: meta(), spec: { containers: { name: 'a' } } },
    { metadata: meta(), spec: [] },
    { metadata: meta(), spec: 'x' },
    { metadata: meta(), spec: { containers: [{ name: 'a', image: null }], nodeSelector: null, volumes: [] }, status: {} },
    { metadata: meta(), spec: { containers: [{ name: 'a' }], securityContext: null, affinity: {} }, status: null },
    { metadata: meta({ labels: {}, annotations: null, finalizers: [] }), spec: { containers: [{ name: 'a' }] } },
    {
      metadata: meta({ managedFields: [{ manager: 'old', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:x': {} } }] }),
      spec: { containers: [{ name: 'a' }] },
    },
    { metadata: meta(), spec: { containers: [{ name: 'a', unknownField: { deep: [1, 2] } }], alsoUnknown: null } },
    { metadata: meta(), spec: { containers: [{ name: 'a', undef: undefined, image: undefined }] } },
    { metadata: meta(), spec: { containers: [undefined, { name: 'b' }] } },
    { metadata: {}, spec: {} },
    { metadata: null, spec: { containers: [{ name: 'a' }] } },
  ];
  for (const o of cases) sameFor(POD, o);
});

test('duplicate keyed items: the last one wins, as compare indexes them', () => {
  sameFor(POD, { metadata: meta(), spec: { containers: [{ name: 'a', image: 'one', args: ['x'] }, { name: 'b' }, { name: 'a', image: 'two' }] } });
  sameFor(POD, {
    metadata: meta(),
    spec: { containers: [{ name: 'a', ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'TCP', name: 'http' }] }] },
  });
  // The hidden first item's keyless ports are never walked, so no ItemKeyError.
  const mf = sameFor(POD, { metadata: meta(), spec: { containers: [{ name: 'a', ports: [{ name: 'no-port' }] }, { name: 'a' }] } });
  assert.ok(mf);
  // A duplicate whose last copy is undefined: set list items.
  sameFor(POD, { metadata: meta({ finalizers: ['a', 'b', 'a'] }), spec: { containers: [{ name: 'a' }] } });
});

test('a null protocol reads as its TCP default', () => {
  sameFor(POD, { metadata: meta(), spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: null }, { containerPort: 80 }] }] } });
});

test('list items missing their keys: no managedFields, on both paths', () => {
  const cases: Array<Record<string, unknown>> = [
    { spec: { containers: [{ image: 'x' }] } },
    { spec: { containers: [{ name: 'a', ports: [{ protocol: 'TCP' }] }] } },
    { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: {} }] }] } },
    { spec: { containers: ['not-a-map'] } },
    { spec: { containers: [null] } },
    { spec: { containers: [{ name: { nested: 1 } }] } },
    { spec: { containers: [{ name: 'a', env: [{ value: 'no name' }] }] } },
  ];
  for (const o of cases) {
    const mf = sameFor(POD, { metadata: meta({ managedFields: [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {} }] }), ...o });
    assert.equal(mf, undefined);
  }
});

test('Deployment, Service, ConfigMap, Secret, Namespace, RBAC, and more built-ins', () => {
  // The tables hold no apps/v1 schema: a Deployment is served like a custom resource, without one.
  same(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta({ labels: { app: 'web' } }),
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
        template: { metadata: { labels: { app: 'web' } }, spec: realisticPod.spec },
      },
    },
    context(undefined, 'apps/v1'),
  );
  sameFor(typeOf('', 'v1', 'Service'), {
    metadata: meta(),
    spec: {
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, targetPort: 8080 },
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' },
      ],
      type: 'ClusterIP',
      clusterIP: '10.0.0.10',
      clusterIPs: ['10.0.0.10'],
      ipFamilies: ['IPv4'],
    },
    status: { loadBalancer: {} },
  });
  const CM = typeOf('', 'v1', 'ConfigMap');
  sameFor(CM, { metadata: meta(), data: { a: '1', 'b.txt': 'two', constructor: 'c', __proto__x: 'p' }, binaryData: { bin: 'AAEC' } });
  sameFor(CM, { metadata: meta({ namespace: 'default' }), data: { key: 'value' } });
  sameFor(CM, { metadata: meta() });
  sameFor(CM, { metadata: meta(), data: {} });
  sameFor(CM, { metadata: meta(), data: null, binaryData: {}, immutable: false });
  sameFor(typeOf('', 'v1', 'Secret'), { metadata: meta(), type: 'Opaque', data: { password: 'cGFzcw==' }, stringData: { user: 'u' } });
  sameFor(typeOf('', 'v1', 'Namespace'), {
    metadata: { name: 'ns', labels: { 'kubernetes.io/metadata.name': 'ns' } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
  sameFor(typeOf('', 'v1', 'Namespace'), { metadata: { name: 'ns' } });
  sameFor(typeOf('rbac.authorization.k8s.io', 'v1', 'Role'), {
    metadata: meta(),
    rules: [
      { apiGroups: [''], resources: ['pods', 'pods'], verbs: ['get', 'list'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'], resourceNames: [] },
    ],
  });
  sameFor(typeOf('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding'), {
    metadata: { name: 'crb' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'alice' }],
  });
  sameFor(typeOf('', 'v1', 'ServiceAccount'), { metadata: meta(), secrets: [{ name: 's' }], automountServiceAccountToken: false });
  sameFor(typeOf('', 'v1', 'Event'), { metadata: meta(), involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R', message: 'm', count: 1 });
});

test('objects without a schema (custom resources): everything is a map, lists are atomic', () => {
  const c = context(undefined, 'example.com/v1');
  same(
    {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: meta({ labels: { a: '1' }, finalizers: ['f'] }),
      spec: { size: 3, list: [{ a: 1 }, { a: 1 }], nested: { deep: { x: null } }, empty: {} },
      status: { ok: true },
    },
    c,
  );
  same({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }, c);
  same({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: { odd: 'object' }, uid: { also: [1] }, labels: null }, spec: null }, c);
  same({ apiVersion: { not: 'a string' }, kind: ['list'], metadata: {}, spec: [] }, c);
  same({ metadata: { name: 'w' }, constructor: 'a field', toString: 1, spec: { constructor: 'kept' } }, c);
  same({ metadata: { name: 'w', managedFields: 'garbage' } }, c);
  same({}, c);
});

test('odd roots and metadata take the general path and still agree', () => {
  const c = context(POD.schema, 'v1');
  same({ apiVersion: 'v1', kind: 'Pod', metadata: 'a string' }, c);
  same({ apiVersion: 'v1', kind: 'Pod', metadata: ['x'] }, c);
  same({ apiVersion: 'v1', kind: 'Pod', metadata: 7 }, c);
});

test('updates after a create: the FieldsV1 the create path wrote decodes and re-encodes as the general one', () => {
  const c = context(POD.schema, 'v1');
  const edits: Array<[string, (o: any) => void]> = [
    // eslint-disable-line @typescript-eslint/no-explicit-any
    [
      'kubectl-create',
      (o) => {
        o.metadata.labels.app = 'api';
      },
    ],
    [
      'kubectl-edit',
      (o) => {
        o.metadata.labels.app = 'api';
      },
    ],
    [
      'kubectl-edit',
      (o) => {
        o.spec.containers.pop();
      },
    ],
    [
      'kubectl-edit',
      (o) => {
        o.spec.containers[0].ports[1].name = 'renamed';
        o.status.phase = 'Running';
      },
    ],
    [
      'kubectl-edit',
      (o) => {
        delete o.spec.volumes;
        o.spec.containers[0].env.push({ name: 'D', value: '4' });
      },
    ],
    ['kubectl-edit', () => undefined],
  ];
  for (const [i, [manager, edit]] of edits.entries()) {
    const written: unknown[] = [];
    for (const create of [trackCreate, trackCreateGeneral]) {
      // A uid of its own per run: the general path leaves a decoding hint behind for its object.
      const live = clone({
        apiVersion: 'v1',
        kind: 'Pod',
        ...realisticPod,
        metadata: { ...realisticPod.metadata, uid: `upd-${i}-${written.length}` },
      }) as KObject;
      create(live, c);
      const next = clone(live);
      delete next.metadata.managedFields;
      edit(next);
      trackUpdate(live, next, undefined, { ...c, manager, now: NOW + 5000 });
      written.push(next.metadata.managedFields);
    }
    assert.deepEqual(written[0], written[1], `edit ${i}`);
    assert.equal(JSON.stringify(written[0]), JSON.stringify(written[1]), `edit ${i}`);
  }
});

test('subresource and empty manager', () => {
  const obj = { apiVersion: 'v1', kind: 'Pod', metadata: meta(), spec: { containers: [{ name: 'a' }] }, status: { phase: 'Running' } };
  same(obj, context(POD.schema, 'v1', 'status'));
  same(obj, { ...context(POD.schema, 'v1'), manager: '' });
});

// Random objects of every built-in kind, shaped by the schema but with nulls,
// empty values, wrong types, unknown fields, repeated and missing keys.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomObjects(seed: number): (node: Node | undefined, depth: number) => unknown {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const odd = (): unknown => pick([null, {}, [], 'str', 0, true, { u: 1 }, [null], undefined]);
  const scalar = (): unknown => pick(['a', 'b', 'TCP', 'UDP', 1, 2, 80, true, '']);
  const gen = (node: Node | undefined, depth: number): unknown => {
    if (r() < 0.08) return odd();
    if (!node) {
      if (depth > 3 || r() < 0.4) return scalar();
      if (r() < 0.3) return Array.from({ length: Math.floor(r() * 3) }, () => gen(undefined, depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(r() * 3) }, () => [pick(['a', 'b', 'c', 'constructor']), gen(undefined, depth + 1)]));
    }
    switch (node.kind) {
      case 'struct': {
        if (depth > 6) return {};
        const names = [...node.fields.keys()];
        const out: Record<string, unknown> = {};
        const n = Math.min(names.length, Math.floor(r() * 5));
        for (let i = 0; i < n; i++) {
          const k = pick(names);
          out[k] = gen(node.fields.get(k)!.node, depth + 1);
        }
        if (r() < 0.05) out['unknownField'] = gen(undefined, depth + 1);
        return out;
      }
      case 'map':
        return Object.fromEntries(Array.from({ length: Math.floor(r() * 3) }, () => [pick(['k1', 'k2', 'k3']), gen(node.values, depth + 1)]));
      case 'list': {
        if (depth > 6) return [];
        return Array.from({ length: Math.floor(r() * 4) }, () => {
          const item = gen(node.items, depth + 1);
          if (node.keys.length > 0 && item && typeof item === 'object' && !Array.isArray(item)) {
            // Keys from a small pool so items repeat; now and then one goes missing.
            for (const k of node.keys)
              if (r() < 0.95) (item as Record<string, unknown>)[k] = pick(k === 'protocol' ? ['TCP', 'UDP', undefined] : ['x', 'y', 80, 53]);
          }
          return item;
        });
      }
      case 'scalar':
        return node.type === 'integer' ? pick([0, 1, 80]) : node.type === 'boolean' ? pick([true, false]) : scalar();
      default:
        return gen(undefined, depth + 1);
    }
  };
  return gen;
}

test('random objects of every built-in kind agree with the general path', () => {
  const gen = randomObjects(20250601);
  let compared = 0;
  let withFields = 0;
  for (const t of reg.all()) {
    if (!t.schema) continue;
    for (let i = 0; i < 40; i++) {
      const body = gen(t.schema, 0);
      const obj =
        body && typeof body === 'object' && !Array.isArray(body)
          ? { ...body, apiVersion: apiVersionOf(t), kind: t.kind, metadata: (body as { metadata?: unknown }).metadata ?? meta() }
          : { metadata: meta() };
      if (same(obj, context(t.schema, apiVersionOf(t)), `${t.kind} #${i} ${JSON.stringify(obj)}`)) withFields++;
      compared++;
    }
  }
  const c = context(undefined, 'example.com/v1');
  for (let i = 0; i < 300; i++) {
    const spec = gen(undefined, 0);
    same({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels: gen(undefined, 1) }, spec }, c, JSON.stringify(spec));
    compared++;
  }
  assert.ok(compared > 1000 && withFields > compared / 4, `${compared} compared, ${withFields} with managedFields`);
});

// A made-up kind reaching what the built-in schemas barely do: required maps,
// lists, scalars and unknown fields (null in the baseline), required server
// paths, atomic structs, a recursive struct deeper than the baseline goes,
// lists of lists, index-keyed and multi-key lists, a granular managedFields.
const TEST_PACKAGE = {
  alias: 'test',
  prefix: 'io.example.test.v1',
  types: {
    Widget: {
      d: '',
      r: ['apiVersion', 'kind', 'spec', 'status', 'weird'],
      f: { apiVersion: ['string', ''], kind: ['string', ''], metadata: ['meta.ObjectMeta', ''], spec: ['test.Spec', ''], status: ['test.Status', ''] },
    },
    Gadget: { d: '', f: { apiVersion: ['string', ''], kind: ['string', ''], metadata: ['test.Meta', ''], spec: ['test.Spec', ''] } },
    Meta: {
      d: '',
      r: ['name', 'labels', 'uid', 'generation'],
      f: {
        name: ['string', ''],
        labels: ['{}string', ''],
        uid: ['string', ''],
        generation: ['test.Item', ''],
        managedFields: ['[]string', '', { lt: 'set' }],
        finalizers: ['[]test.Item', '', { lt: 'map', lk: ['name'] }],
      },
    },
    Spec: {
      d: '',
      r: ['m', 'mm', 'l', 's', 'a', 'deep', 'raw', 'al', 'n', 'ghost'],
      f: {
        m: ['{}string', ''],
        mm: ['{}test.Item', ''],
        am: ['{}string', '', { mt: 'atomic' }],
        l: ['[]test.Item', '', { lt: 'map', lk: ['name', 'port'] }],
        li: ['[]test.Item', '', { lt: 'map' }],
        s: ['[]string', '', { lt: 'set' }],
        ss: ['[][]string', '', { lt: 'set' }],
        al: ['[]string', ''],
        a: ['test.Atomic', ''],
        deep: ['test.Deep', ''],
        raw: ['raw', ''],
        n: ['int32', ''],
      },
    },
    Item: {
      d: '',
      r: ['name'],
      f: { name: ['string', ''], port: ['int32', ''], protocol: ['string', ''], sub: ['[]test.Item', '', { lt: 'map', lk: ['name'] }], m: ['{}string', ''] },
    },
    Atomic: { d: '', r: ['x'], mt: 'atomic', f: { x: ['string', ''] } },
    Deep: { d: '', r: ['next', 'v', 'm'], f: { next: ['test.Deep', ''], v: ['string', ''], m: ['{}string', ''] } },
    Status: { d: '', r: ['inner', 'conditions'], f: { inner: ['test.Deep', ''], conditions: ['[]test.Item', '', { lt: 'map', lk: ['name'] }] } },
  },
} as const;

const made = new SchemaModel([...PACKAGES, TEST_PACKAGE]);
const WIDGET = made.struct('test.Widget') as StructNode;
const GADGET = made.struct('test.Gadget') as StructNode;

test('a made-up schema: required maps and scalars, server paths, atomic and recursive structs', () => {
  const w = context(WIDGET, 'example.com/v1');
  const g = context(GADGET, 'example.com/v1');
  const cases: Array<Record<string, unknown>> = [
    { apiVersion: 'example.com/v1', kind: 'Widget', metadata: meta() },
    {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: meta(),
      spec: { m: { a: '1', constructor: 'a field', toString: 'another' }, mm: { k: { name: 'n' } }, n: 3 },
      weird: { any: 'thing' },
    },
    { apiVersion: null, kind: { odd: 1 }, metadata: meta(), spec: { m: null, mm: {}, l: [], s: null, a: { x: 'y' }, raw: { r: [1] }, al: ['a'], ghost: 1 } },
    {
      metadata: meta(),
      spec: { a: null, deep: { next: { next: { next: { next: { next: { next: { v: 'deepest', m: { k: 'v' } } } } } } }, v: null } },
      status: { inner: { next: null, m: {} } },
    },
    {
      metadata: meta(),
      spec: {
        deep: null,
        l: [
          { name: 'a', port: 1 },
          { name: 'a', port: 2 },
          { name: 'a', port: 1, protocol: 'X' },
        ],
        li: [{ name: 'a' }, { name: 'a' }],
        ss: [['a'], ['a'], ['b', 'a']],
      },
    },
    { metadata: meta(), spec: { l: [{ name: 'a' }] } }, // port missing: ItemKeyError
    { metadata: meta(), spec: { li: Array.from({ length: 12 }, (_, i) => ({ name: `n${i}` })) } }, // i:10 after i:9
    { metadata: meta(), status: { conditions: [{ name: 'c', sub: [{ name: 's' }, { name: 's', m: { k: 'v' } }] }], inner: 'not a struct' } },
    { metadata: meta(), spec: 'scalar', status: [] },
  ];
  for (const o of cases) same(o, w, JSON.stringify(o));
  const gadgets: Array<Record<string, unknown>> = [
    {
      apiVersion: 'v',
      kind: 'Gadget',
      metadata: { name: 'g', labels: { constructor: 'x', a: 'b' }, uid: null, generation: { name: 'gen', m: { a: 'b' } }, finalizers: [{ name: 'f' }] },
    },
    { metadata: { name: { not: 'a string' }, labels: null, managedFields: ['kept', 'out'] } },
    { metadata: { managedFields: ['x'] } },
    { metadata: {} },
    {},
  ];
  for (const o of gadgets) same(o, g, JSON.stringify(o));
  const gen = randomObjects(7);
  for (let i = 0; i < 300; i++) {
    const body = gen(WIDGET, 0);
    same(body && typeof body === 'object' && !Array.isArray(body) ? body : {}, w, `widget #${i} ${JSON.stringify(body)}`);
    same({ metadata: gen(made.struct('test.Meta'), 1), spec: gen(made.struct('test.Spec'), 1) }, g, `gadget #${i}`);
  }
});

test('fields named like Object.prototype members are owned like any other', () => {
  const t = typeOf('', 'v1', 'ConfigMap');
  const c = context(t.schema, 'v1');
  const created = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p', uid: 'u-proto' }, data: { constructor: 'c', a: '1' } } as unknown as KObject;
  same(created, c);
  trackCreate(created, c);
  const fields = (created.metadata.managedFields as { fieldsV1: Record<string, Record<string, unknown>> }[])[0]!.fieldsV1;
  assert.deepEqual(Object.keys(fields['f:data']!), ['.', 'f:a', 'f:constructor']);
  // An update that adds `toString` owns it.
  const next = { ...created, metadata: { ...created.metadata }, data: { constructor: 'c', a: '1', toString: 't' } } as unknown as KObject;
  trackUpdate(created, next, undefined, { ...c, manager: 'editor' });
  const editor = (next.metadata.managedFields as { manager: string; fieldsV1: Record<string, Record<string, unknown>> }[]).find((e) => e.manager === 'editor');
  assert.deepEqual(editor?.fieldsV1, { 'f:data': { 'f:toString': {} } });
});

test('map keys past the kept `f:` keys table: creates keep agreeing with the general path', () => {
  const t = typeOf('', 'v1', 'ConfigMap');
  const c = context(t.schema, 'v1');
  // 5,000 distinct keys over the creates: the kept keys (lib/fieldmanager/create.ts, 4,096) are forgotten and made again.
  for (let i = 0; i < 50; i++) {
    const data: Record<string, string> = {};
    for (let j = 0; j < 100; j++) data[`k${i}-${j}`] = 'v';
    const fields = same({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `m${i}`, labels: { app: 'x' } }, data }, c, `create #${i}`) as {
      fieldsV1: Record<string, Record<string, unknown>>;
    }[];
    assert.equal(Object.keys(fields[0]!.fieldsV1['f:data']!).length, 101, `create #${i}`);
  }
});
