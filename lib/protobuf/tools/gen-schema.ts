// Regenerates lib/protobuf/schema/*.ts from upstream Kubernetes sources.
//
// Field numbers and proto types come from each package's generated.proto; the
// JSON shape (JSON name, omitempty, pointer, inline) comes from the Go struct
// tags in the same package, because generated.proto does not say how Go renders
// a zero value and the JSON form must match what kube-apiserver stores.
//
// Usage: node --import tsx lib/protobuf/tools/gen-schema.ts <kubernetes/api git dir>
//          <kubernetes/apimachinery git dir> <kubernetes/kube-aggregator git dir>
// (git dirs as produced by a bare mirror; files are read from HEAD).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface PkgSpec {
  alias: string; // short name used in the tables
  file: string; // output file under schema/
  exportName: string;
  repo: 0 | 1 | 2; // index into argv git dirs
  dir: string;
  protoPackage: string;
  roots: string[];
}

const core = [
  'Namespace',
  'ConfigMap',
  'Secret',
  'ServiceAccount',
  'Pod',
  'Node',
  'Service',
  'Endpoints',
  'Event',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'PodTemplate',
  'ReplicationController',
  'LimitRange',
  'ResourceQuota',
  'ComponentStatus',
];
const PKGS: PkgSpec[] = [
  {
    alias: 'meta',
    file: 'meta-v1.ts',
    exportName: 'metaV1',
    repo: 1,
    dir: 'pkg/apis/meta/v1',
    protoPackage: 'k8s.io.apimachinery.pkg.apis.meta.v1',
    roots: [
      'ObjectMeta',
      'ListMeta',
      'OwnerReference',
      'ManagedFieldsEntry',
      'FieldsV1',
      'Time',
      'MicroTime',
      'Duration',
      'LabelSelector',
      'LabelSelectorRequirement',
      'Status',
      'StatusDetails',
      'StatusCause',
      'DeleteOptions',
      'Preconditions',
      'TypeMeta',
      'WatchEvent',
      'PartialObjectMetadata',
      'PartialObjectMetadataList',
      'GroupVersionKind',
    ],
  },
  {
    alias: 'runtime',
    file: 'runtime.ts',
    exportName: 'runtime',
    repo: 1,
    dir: 'pkg/runtime',
    protoPackage: 'k8s.io.apimachinery.pkg.runtime',
    roots: ['Unknown', 'RawExtension'],
  },
  {
    alias: 'intstr',
    file: 'intstr.ts',
    exportName: 'intstr',
    repo: 1,
    dir: 'pkg/util/intstr',
    protoPackage: 'k8s.io.apimachinery.pkg.util.intstr',
    roots: ['IntOrString'],
  },
  {
    alias: 'resource',
    file: 'resource.ts',
    exportName: 'resource',
    repo: 1,
    dir: 'pkg/api/resource',
    protoPackage: 'k8s.io.apimachinery.pkg.api.resource',
    roots: ['Quantity'],
  },
  {
    alias: 'core',
    file: 'core-v1.ts',
    exportName: 'coreV1',
    repo: 0,
    dir: 'core/v1',
    protoPackage: 'k8s.io.api.core.v1',
    roots: [...core, ...core.map((k) => `${k}List`)],
  },
  {
    alias: 'apps',
    file: 'apps-v1.ts',
    exportName: 'appsV1',
    repo: 0,
    dir: 'apps/v1',
    protoPackage: 'k8s.io.api.apps.v1',
    roots: ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ControllerRevision'].flatMap((k) => [k, `${k}List`]),
  },
  {
    alias: 'autoscaling',
    file: 'autoscaling-v1.ts',
    exportName: 'autoscalingV1',
    repo: 0,
    dir: 'autoscaling/v1',
    protoPackage: 'k8s.io.api.autoscaling.v1',
    roots: ['Scale', 'HorizontalPodAutoscaler', 'HorizontalPodAutoscalerList'],
  },
  {
    alias: 'autoscalingV2',
    file: 'autoscaling-v2.ts',
    exportName: 'autoscalingV2',
    repo: 0,
    dir: 'autoscaling/v2',
    protoPackage: 'k8s.io.api.autoscaling.v2',
    roots: ['HorizontalPodAutoscaler', 'HorizontalPodAutoscalerList'],
  },
  {
    alias: 'batch',
    file: 'batch-v1.ts',
    exportName: 'batchV1',
    repo: 0,
    dir: 'batch/v1',
    protoPackage: 'k8s.io.api.batch.v1',
    roots: ['Job', 'JobList', 'CronJob', 'CronJobList'],
  },
  {
    // Only the messages batch/v1's Job scheduling configuration refers to.
    alias: 'schedulingV1alpha3',
    file: 'scheduling-v1alpha3.ts',
    exportName: 'schedulingV1alpha3',
    repo: 0,
    dir: 'scheduling/v1alpha3',
    protoPackage: 'k8s.io.api.scheduling.v1alpha3',
    roots: [],
  },
  {
    alias: 'policy',
    file: 'policy-v1.ts',
    exportName: 'policyV1',
    repo: 0,
    dir: 'policy/v1',
    protoPackage: 'k8s.io.api.policy.v1',
    roots: ['PodDisruptionBudget'].flatMap((k) => [k, `${k}List`]),
  },
  {
    alias: 'networking',
    file: 'networking-v1.ts',
    exportName: 'networkingV1',
    repo: 0,
    dir: 'networking/v1',
    protoPackage: 'k8s.io.api.networking.v1',
    roots: ['Ingress', 'IngressClass', 'NetworkPolicy'].flatMap((k) => [k, `${k}List`]),
  },
  {
    alias: 'scheduling',
    file: 'scheduling-v1.ts',
    exportName: 'schedulingV1',
    repo: 0,
    dir: 'scheduling/v1',
    protoPackage: 'k8s.io.api.scheduling.v1',
    roots: ['PriorityClass', 'PriorityClassList'],
  },
  {
    alias: 'storage',
    file: 'storage-v1.ts',
    exportName: 'storageV1',
    repo: 0,
    dir: 'storage/v1',
    protoPackage: 'k8s.io.api.storage.v1',
    roots: ['StorageClass', 'CSIDriver', 'CSINode', 'CSIStorageCapacity', 'VolumeAttachment'].flatMap((k) => [k, `${k}List`]),
  },
  {
    alias: 'node',
    file: 'node-v1.ts',
    exportName: 'nodeV1',
    repo: 0,
    dir: 'node/v1',
    protoPackage: 'k8s.io.api.node.v1',
    roots: ['RuntimeClass'].flatMap((k) => [k, `${k}List`]),
  },
  {
    alias: 'events',
    file: 'events-v1.ts',
    exportName: 'eventsV1',
    repo: 0,
    dir: 'events/v1',
    protoPackage: 'k8s.io.api.events.v1',
    roots: ['Event', 'EventList'],
  },
  {
    alias: 'coordination',
    file: 'coordination-v1.ts',
    exportName: 'coordinationV1',
    repo: 0,
    dir: 'coordination/v1',
    protoPackage: 'k8s.io.api.coordination.v1',
    roots: ['Lease', 'LeaseList'],
  },
  {
    alias: 'discovery',
    file: 'discovery-v1.ts',
    exportName: 'discoveryV1',
    repo: 0,
    dir: 'discovery/v1',
    protoPackage: 'k8s.io.api.discovery.v1',
    roots: ['EndpointSlice', 'EndpointSliceList'],
  },
  {
    alias: 'apidiscovery',
    file: 'apidiscovery-v2.ts',
    exportName: 'apidiscoveryV2',
    repo: 0,
    dir: 'apidiscovery/v2',
    protoPackage: 'k8s.io.api.apidiscovery.v2',
    roots: ['APIGroupDiscoveryList', 'APIGroupDiscovery'],
  },
  {
    alias: 'rbac',
    file: 'rbac-v1.ts',
    exportName: 'rbacV1',
    repo: 0,
    dir: 'rbac/v1',
    protoPackage: 'k8s.io.api.rbac.v1',
    roots: ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding', 'RoleList', 'ClusterRoleList', 'RoleBindingList', 'ClusterRoleBindingList'],
  },
  {
    alias: 'apiregistration',
    file: 'apiregistration-v1.ts',
    exportName: 'apiregistrationV1',
    repo: 2,
    dir: 'pkg/apis/apiregistration/v1',
    protoPackage: 'k8s.io.kube_aggregator.pkg.apis.apiregistration.v1',
    roots: ['APIService', 'APIServiceList'],
  },
  {
    alias: 'authentication',
    file: 'authentication-v1.ts',
    exportName: 'authenticationV1',
    repo: 0,
    dir: 'authentication/v1',
    protoPackage: 'k8s.io.api.authentication.v1',
    roots: ['TokenRequest', 'TokenReview', 'SelfSubjectReview'],
  },
  {
    alias: 'authorization',
    file: 'authorization-v1.ts',
    exportName: 'authorizationV1',
    repo: 0,
    dir: 'authorization/v1',
    protoPackage: 'k8s.io.api.authorization.v1',
    roots: ['SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'],
  },
  {
    alias: 'certificates',
    file: 'certificates-v1.ts',
    exportName: 'certificatesV1',
    repo: 0,
    dir: 'certificates/v1',
    protoPackage: 'k8s.io.api.certificates.v1',
    roots: ['CertificateSigningRequest', 'CertificateSigningRequestList'],
  },
];
// Go packages whose JSON form is hand-written in lib/protobuf/wellknown.ts: no tags needed.
const CUSTOM = new Set([
  'meta.Time',
  'meta.MicroTime',
  'meta.Duration',
  'meta.FieldsV1',
  'runtime.RawExtension',
  'runtime.Unknown',
  'intstr.IntOrString',
  'resource.Quantity',
]);

interface ProtoField {
  rule: '' | '[]';
  type: string;
  key?: string;
  name: string;
  id: number;
}
interface GoField {
  jsonName: string;
  omitempty: boolean;
  omitzero: boolean;
  pointer: boolean;
  inline: boolean;
}

const gitDirs = process.argv.slice(2);
const git = (repo: number, ...args: string[]) => execFileSync('git', ['-C', gitDirs[repo]!, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const aliasOf = new Map(PKGS.map((p) => [p.protoPackage, p.alias]));
aliasOf.set('k8s.io.apimachinery.pkg.runtime.schema', 'schema');

function parseProto(text: string, own: string): Map<string, ProtoField[]> {
  const out = new Map<string, ProtoField[]>();
  let cur: ProtoField[] | undefined;
  const ref = (t: string) => {
    if (/^(string|bytes|bool|u?int(32|64)|s?fixed(32|64)|sint(32|64)|double|float)$/.test(t)) return t;
    const i = t.lastIndexOf('.');
    if (i < 0) return `${own}.${t}`;
    const alias = aliasOf.get(t.slice(t.startsWith('.') ? 1 : 0, i));
    if (!alias) throw new Error(`unknown proto package in ${t}`);
    return `${alias}.${t.slice(i + 1)}`;
  };
  for (const line of text.split('\n')) {
    let m = /^message (\w+) \{/.exec(line);
    if (m) {
      out.set(`${own}.${m[1]}`, (cur = []));
      continue;
    }
    m = /^\s+(optional|repeated) ([\w.]+) (\w+) = (\d+);/.exec(line);
    if (m && cur) {
      cur.push({ rule: m[1] === 'repeated' ? '[]' : '', type: ref(m[2]!), name: m[3]!, id: Number(m[4]) });
      continue;
    }
    m = /^\s+map<(\w+), ([\w.]+)> (\w+) = (\d+);/.exec(line);
    if (m && cur) {
      cur.push({ rule: '', key: m[1]!, type: ref(m[2]!), name: m[3]!, id: Number(m[4]) });
      continue;
    }
    if (/^\s+(optional|repeated|required|map|oneof)\b/.test(line)) throw new Error(`unparsed proto line: ${line}`);
  }
  return out;
}

// Go struct tags: `json:"name,omitempty" protobuf:"bytes,3,opt,name=name"`, keyed by message and field number.
function parseGo(text: string, own: string, goFields: Map<string, Map<number, GoField>>, slices: Set<string>) {
  let cur: Map<number, GoField> | undefined;
  for (const line of text.split('\n')) {
    let m = /^type (\w+) struct \{/.exec(line);
    if (m) {
      goFields.set(`${own}.${m[1]}`, (cur = new Map()));
      continue;
    }
    m = /^type (\w+) \[\]\w+$/.exec(line);
    if (m) slices.add(`${own}.${m[1]}`);
    if (/^\}/.test(line)) {
      cur = undefined;
      continue;
    }
    if (!cur) continue;
    m = /^\s+(?:(\w+)\s+)?([*\w.[\]]+)\s+`(.*)`/.exec(line);
    if (!m) continue;
    const pb = /protobuf:"\w+,(\d+),/.exec(m[3]!);
    if (!pb) continue;
    const json = /json:"([^"]*)"/.exec(m[3]!)?.[1] ?? '';
    const [jname = '', ...opts] = json.split(',');
    const embedded = m[1] === undefined;
    cur.set(Number(pb[1]), {
      jsonName: jname,
      omitempty: opts.includes('omitempty'),
      omitzero: opts.includes('omitzero'),
      pointer: m[2]!.startsWith('*'),
      inline: opts.includes('inline') || (embedded && jname === ''),
    });
  }
}

const protos = new Map<string, ProtoField[]>();
const goFields = new Map<string, Map<number, GoField>>();
const slices = new Set<string>();
const commits: Record<string, string> = {};
for (const p of PKGS) {
  commits[p.alias] = git(p.repo, 'rev-parse', 'HEAD').trim();
  for (const [k, v] of parseProto(git(p.repo, 'show', `HEAD:${p.dir}/generated.proto`), p.alias)) protos.set(k, v);
  const files = git(p.repo, 'ls-tree', '--name-only', 'HEAD', `${p.dir}/`)
    .split('\n')
    .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go') && !/generated|zz_/.test(f));
  for (const f of files) parseGo(git(p.repo, 'show', `HEAD:${f}`), p.alias, goFields, slices);
}

// Closure over referenced messages starting from the served kinds.
const wanted = new Set<string>();
const visit = (name: string) => {
  if (wanted.has(name) || !name.includes('.')) return;
  if (!protos.has(name)) throw new Error(`message ${name} not found`);
  wanted.add(name);
  for (const f of protos.get(name)!) visit(f.type);
};
for (const p of PKGS) for (const r of p.roots) visit(`${p.alias}.${r}`);

// Field line grammar (parsed by lib/protobuf/schema/types.ts):
//   "<protoName> <id> <type>[ flag...]"  type: scalar | Msg | alias.Msg | []T | map<K,V>
//   flags: ? omitempty   0 omitzero   * pointer (presence kept)   inline   json=<name> (JSON name differs)
function fieldLine(msg: string, f: ProtoField): string {
  const own = msg.slice(0, msg.indexOf('.'));
  const t = f.type.startsWith(`${own}.`) ? f.type.slice(own.length + 1) : f.type;
  const type = f.key ? `map<${f.key},${t}>` : `${f.rule}${t}`;
  const parts = [f.name, String(f.id), type];
  if (!CUSTOM.has(msg) && !slices.has(msg)) {
    const g = goFields.get(msg)?.get(f.id);
    if (!g) throw new Error(`no Go field for ${msg}.${f.name} (${f.id})`);
    if (g.omitempty) parts.push('?');
    if (g.omitzero) parts.push('0');
    if (g.pointer) parts.push('*');
    if (g.inline) parts.push('inline');
    else if (g.jsonName !== f.name) parts.push(`json=${g.jsonName}`);
  }
  return `'${parts.join(' ')}'`;
}

const outDir = fileURLToPath(new URL('../schema/', import.meta.url));
for (const p of PKGS) {
  const names = [...wanted].filter((n) => n.startsWith(`${p.alias}.`)).sort();
  const body = names.map((n) => {
    const short = n.slice(p.alias.length + 1);
    const tag = slices.has(n) ? ' // JSON: a bare array (Go named slice type)' : '';
    return `    ${short}: [${protos
      .get(n)!
      .map((f) => fieldLine(n, f))
      .join(', ')}],${tag}`;
  });
  const src = [
    `// Message table for ${p.protoPackage}.`,
    `// Generated by lib/protobuf/tools/gen-schema.ts from ${p.dir}/generated.proto and the`,
    `// package's Go struct tags at commit ${commits[p.alias]}. Regenerate, do not hand-edit.`,
    `import type { PackageSchema } from './types.js';`,
    '',
    `export const ${p.exportName}: PackageSchema = {`,
    `  alias: '${p.alias}',`,
    `  protoPackage: '${p.protoPackage}',`,
    ...(names.some((n) => slices.has(n))
      ? [
          `  namedSlices: [${names
            .filter((n) => slices.has(n))
            .map((n) => `'${n.slice(p.alias.length + 1)}'`)
            .join(', ')}],`,
        ]
      : []),
    '  messages: {',
    ...body,
    '  },',
    '};',
    '',
  ].join('\n');
  writeFileSync(outDir + p.file, src);
  console.log(`${p.file}: ${names.length} messages`);
}
