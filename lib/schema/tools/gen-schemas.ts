// Regenerates lib/schema/gen/*.ts from upstream Kubernetes Go API types.
//
// Fields, JSON names, required-ness and the zero values kube writes come from
// the Go structs and their tags (`json:"name,omitempty"`, `+optional`); merge markers from the `patchStrategy`
// / `patchMergeKey` tags and the `+listType`, `+listMapKey`, `+mapType`,
// `+structType` comment markers; descriptions from types_swagger_doc_generated.go
// (what kube-apiserver's OpenAPI serves), else from the doc comments. Only the
// closure of types reachable from the served kinds is written.
//
// Usage: node --import tsx lib/schema/tools/gen-schemas.ts <kubernetes/api git dir>
//          <kubernetes/apimachinery git dir> <kubernetes/kube-aggregator git dir>
//          <kubernetes/apiextensions-apiserver git dir> [--only=<alias>,…]
// (bare git dirs; files are read from HEAD, whose commit each table records).
// A dir given as `-` is not read: its packages are skipped (packages that
// refer to them cannot be generated then). `--only` writes just the named
// packages' tables (the index still lists every package), so one table can be
// regenerated without moving the others to newer commits.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FieldDef, Markers, TypeDef } from '../types.js';

interface Pkg {
  alias: string;
  file: string;
  exportName: string;
  repo: 0 | 1 | 2 | 3;
  dir: string;
  importPath: string;
  prefix: string;
  roots: string[];
}

const coreKinds = [
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
const withLists = (kinds: string[]) => [...kinds, ...kinds.map((k) => `${k}List`)];
const PKGS: Pkg[] = [
  {
    alias: 'meta',
    file: 'meta-v1.ts',
    exportName: 'metaV1',
    repo: 1,
    dir: 'pkg/apis/meta/v1',
    importPath: 'k8s.io/apimachinery/pkg/apis/meta/v1',
    prefix: 'io.k8s.apimachinery.pkg.apis.meta.v1',
    roots: ['ObjectMeta', 'ListMeta', 'Status', 'DeleteOptions', 'APIResourceList', 'WatchEvent', 'Patch'],
  },
  {
    alias: 'core',
    file: 'core-v1.ts',
    exportName: 'coreV1',
    repo: 0,
    dir: 'core/v1',
    importPath: 'k8s.io/api/core/v1',
    prefix: 'io.k8s.api.core.v1',
    roots: withLists(coreKinds),
  },
  {
    alias: 'autoscaling',
    file: 'autoscaling-v1.ts',
    exportName: 'autoscalingV1',
    repo: 0,
    dir: 'autoscaling/v1',
    importPath: 'k8s.io/api/autoscaling/v1',
    prefix: 'io.k8s.api.autoscaling.v1',
    roots: [...withLists(['HorizontalPodAutoscaler']), 'Scale'],
  },
  {
    alias: 'autoscalingV2',
    file: 'autoscaling-v2.ts',
    exportName: 'autoscalingV2',
    repo: 0,
    dir: 'autoscaling/v2',
    importPath: 'k8s.io/api/autoscaling/v2',
    prefix: 'io.k8s.api.autoscaling.v2',
    roots: withLists(['HorizontalPodAutoscaler']),
  },
  {
    alias: 'batch',
    file: 'batch-v1.ts',
    exportName: 'batchV1',
    repo: 0,
    dir: 'batch/v1',
    importPath: 'k8s.io/api/batch/v1',
    prefix: 'io.k8s.api.batch.v1',
    roots: withLists(['Job', 'CronJob']),
  },
  {
    // Only the types batch/v1's Job scheduling configuration refers to (no kind of it is served).
    alias: 'schedulingV1alpha3',
    file: 'scheduling-v1alpha3.ts',
    exportName: 'schedulingV1alpha3',
    repo: 0,
    dir: 'scheduling/v1alpha3',
    importPath: 'k8s.io/api/scheduling/v1alpha3',
    prefix: 'io.k8s.api.scheduling.v1alpha3',
    roots: [],
  },
  {
    alias: 'policy',
    file: 'policy-v1.ts',
    exportName: 'policyV1',
    repo: 0,
    dir: 'policy/v1',
    importPath: 'k8s.io/api/policy/v1',
    prefix: 'io.k8s.api.policy.v1',
    roots: withLists(['PodDisruptionBudget']),
  },
  {
    alias: 'networking',
    file: 'networking-v1.ts',
    exportName: 'networkingV1',
    repo: 0,
    dir: 'networking/v1',
    importPath: 'k8s.io/api/networking/v1',
    prefix: 'io.k8s.api.networking.v1',
    roots: withLists(['Ingress', 'IngressClass', 'NetworkPolicy']),
  },
  {
    alias: 'scheduling',
    file: 'scheduling-v1.ts',
    exportName: 'schedulingV1',
    repo: 0,
    dir: 'scheduling/v1',
    importPath: 'k8s.io/api/scheduling/v1',
    prefix: 'io.k8s.api.scheduling.v1',
    roots: withLists(['PriorityClass']),
  },
  {
    alias: 'storage',
    file: 'storage-v1.ts',
    exportName: 'storageV1',
    repo: 0,
    dir: 'storage/v1',
    importPath: 'k8s.io/api/storage/v1',
    prefix: 'io.k8s.api.storage.v1',
    roots: withLists(['StorageClass', 'CSIDriver', 'CSINode', 'CSIStorageCapacity', 'VolumeAttachment']),
  },
  {
    alias: 'node',
    file: 'node-v1.ts',
    exportName: 'nodeV1',
    repo: 0,
    dir: 'node/v1',
    importPath: 'k8s.io/api/node/v1',
    prefix: 'io.k8s.api.node.v1',
    roots: withLists(['RuntimeClass']),
  },
  {
    alias: 'events',
    file: 'events-v1.ts',
    exportName: 'eventsV1',
    repo: 0,
    dir: 'events/v1',
    importPath: 'k8s.io/api/events/v1',
    prefix: 'io.k8s.api.events.v1',
    roots: withLists(['Event']),
  },
  {
    alias: 'apps',
    file: 'apps-v1.ts',
    exportName: 'appsV1',
    repo: 0,
    dir: 'apps/v1',
    importPath: 'k8s.io/api/apps/v1',
    prefix: 'io.k8s.api.apps.v1',
    roots: withLists(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ControllerRevision']),
  },
  {
    alias: 'coordination',
    file: 'coordination-v1.ts',
    exportName: 'coordinationV1',
    repo: 0,
    dir: 'coordination/v1',
    importPath: 'k8s.io/api/coordination/v1',
    prefix: 'io.k8s.api.coordination.v1',
    roots: withLists(['Lease']),
  },
  {
    alias: 'discovery',
    file: 'discovery-v1.ts',
    exportName: 'discoveryV1',
    repo: 0,
    dir: 'discovery/v1',
    importPath: 'k8s.io/api/discovery/v1',
    prefix: 'io.k8s.api.discovery.v1',
    roots: withLists(['EndpointSlice']),
  },
  {
    alias: 'rbac',
    file: 'rbac-v1.ts',
    exportName: 'rbacV1',
    repo: 0,
    dir: 'rbac/v1',
    importPath: 'k8s.io/api/rbac/v1',
    prefix: 'io.k8s.api.rbac.v1',
    roots: withLists(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']),
  },
  {
    alias: 'apiregistration',
    file: 'apiregistration-v1.ts',
    exportName: 'apiregistrationV1',
    repo: 2,
    dir: 'pkg/apis/apiregistration/v1',
    importPath: 'k8s.io/kube-aggregator/pkg/apis/apiregistration/v1',
    prefix: 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1',
    roots: withLists(['APIService']),
  },
  {
    alias: 'flowcontrol',
    file: 'flowcontrol-v1.ts',
    exportName: 'flowcontrolV1',
    repo: 0,
    dir: 'flowcontrol/v1',
    importPath: 'k8s.io/api/flowcontrol/v1',
    prefix: 'io.k8s.api.flowcontrol.v1',
    roots: withLists(['FlowSchema', 'PriorityLevelConfiguration']),
  },
  {
    alias: 'authentication',
    file: 'authentication-v1.ts',
    exportName: 'authenticationV1',
    repo: 0,
    dir: 'authentication/v1',
    importPath: 'k8s.io/api/authentication/v1',
    prefix: 'io.k8s.api.authentication.v1',
    roots: ['TokenRequest', 'TokenReview', 'SelfSubjectReview'],
  },
  {
    alias: 'authenticationV1beta1',
    file: 'authentication-v1beta1.ts',
    exportName: 'authenticationV1beta1',
    repo: 0,
    dir: 'authentication/v1beta1',
    importPath: 'k8s.io/api/authentication/v1beta1',
    prefix: 'io.k8s.api.authentication.v1beta1',
    roots: ['TokenReview', 'SelfSubjectReview'],
  },
  {
    alias: 'authorization',
    file: 'authorization-v1.ts',
    exportName: 'authorizationV1',
    repo: 0,
    dir: 'authorization/v1',
    importPath: 'k8s.io/api/authorization/v1',
    prefix: 'io.k8s.api.authorization.v1',
    roots: ['SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'],
  },
  {
    alias: 'apiextensions',
    file: 'apiextensions-v1.ts',
    exportName: 'apiextensionsV1',
    repo: 3,
    dir: 'pkg/apis/apiextensions/v1',
    importPath: 'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1',
    prefix: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1',
    roots: withLists(['CustomResourceDefinition']),
  },
  {
    alias: 'authorizationV1beta1',
    file: 'authorization-v1beta1.ts',
    exportName: 'authorizationV1beta1',
    repo: 0,
    dir: 'authorization/v1beta1',
    importPath: 'k8s.io/api/authorization/v1beta1',
    prefix: 'io.k8s.api.authorization.v1beta1',
    roots: ['SubjectAccessReview'],
  },
  {
    alias: 'certificates',
    file: 'certificates-v1.ts',
    exportName: 'certificatesV1',
    repo: 0,
    dir: 'certificates/v1',
    importPath: 'k8s.io/api/certificates/v1',
    prefix: 'io.k8s.api.certificates.v1',
    roots: withLists(['CertificateSigningRequest']),
  },
  {
    alias: 'admissionregistration',
    file: 'admissionregistration-v1.ts',
    exportName: 'admissionregistrationV1',
    repo: 0,
    dir: 'admissionregistration/v1',
    importPath: 'k8s.io/api/admissionregistration/v1',
    prefix: 'io.k8s.api.admissionregistration.v1',
    roots: withLists(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']),
  },
];

/** Go types whose JSON form is not their struct: written as our scalar names. */
const SPECIAL: Record<string, string> = {
  'k8s.io/apimachinery/pkg/apis/meta/v1.Time': 'time',
  'k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime': 'time',
  'k8s.io/apimachinery/pkg/apis/meta/v1.Duration': 'string',
  'k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1': 'fields',
  'k8s.io/apimachinery/pkg/api/resource.Quantity': 'quantity',
  'k8s.io/apimachinery/pkg/util/intstr.IntOrString': 'intstr',
  'k8s.io/apimachinery/pkg/runtime.RawExtension': 'raw',
  'k8s.io/apimachinery/pkg/types.UID': 'string',
  'k8s.io/apimachinery/pkg/types.NodeName': 'string',
};
/**
 * Go types with their own JSON form that kube's OpenAPI describes without a
 * type (any JSON value; JSONSchemaProps' `default`, `items`, …): written as
 * `any` tables, defined by their description alone.
 */
const ANY_TYPES = new Set(
  ['JSON', 'JSONSchemaPropsOrArray', 'JSONSchemaPropsOrBool', 'JSONSchemaPropsOrStringArray'].map(
    (n) => `k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.${n}`,
  ),
);
const BUILTIN: Record<string, string> = {
  string: 'string',
  bool: 'bool',
  int: 'int64',
  int32: 'int32',
  int64: 'int64',
  uint16: 'int32',
  uint32: 'int64',
  uint64: 'int64',
  float32: 'double',
  float64: 'double',
  byte: 'int32',
};

const args = process.argv.slice(2);
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const gitDirs = args.filter((a) => !a.startsWith('--'));
if (gitDirs.length !== 4)
  throw new Error('usage: gen-schemas.ts <api git dir> <apimachinery git dir> <kube-aggregator git dir> <apiextensions-apiserver git dir> [--only=<alias>,…]');
const git = (repo: number, ...args: string[]) => execFileSync('git', ['-C', gitDirs[repo]!, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const commits = gitDirs.map((d, i) => (d === '-' ? '' : git(i, 'rev-parse', 'HEAD').trim()));
const repoNames = ['kubernetes/api', 'kubernetes/apimachinery', 'kubernetes/kube-aggregator', 'kubernetes/apiextensions-apiserver'];
const ALL_PKGS = PKGS;
const READ = PKGS.filter((p) => gitDirs[p.repo] !== '-');

interface RawField {
  name: string;
  goType: string;
  tag: string;
  comments: string[];
}
interface RawType {
  name: string;
  comments: string[];
  fields?: RawField[];
  alias?: string;
}
interface Parsed {
  types: Map<string, RawType>;
  imports: Map<string, string>;
  docs: Map<string, Map<string, string>>;
}

function parseGo(text: string, into: Parsed): void {
  const lines = text.split('\n');
  let comments: string[] = [];
  let cur: RawType | undefined;
  let inImports = false;
  let inBlock = false;
  for (const line of lines) {
    if (inBlock) {
      if (line.includes('*/')) inBlock = false;
      continue;
    }
    if (/^\s*\/\*/.test(line) && !line.includes('*/')) {
      inBlock = true;
      continue;
    }
    if (/^import \($/.test(line)) {
      inImports = true;
      continue;
    }
    if (inImports) {
      if (line === ')') {
        inImports = false;
        continue;
      }
      const m = /^\s+(?:(\w+) )?"([^"]+)"/.exec(line);
      if (m) into.imports.set(m[1] ?? m[2]!.split('/').pop()!, m[2]!);
      continue;
    }
    const single = /^import (?:(\w+) )?"([^"]+)"/.exec(line);
    if (single) {
      into.imports.set(single[1] ?? single[2]!.split('/').pop()!, single[2]!);
      continue;
    }
    if (cur) {
      if (line === '}') {
        into.types.set(cur.name, cur);
        cur = undefined;
        comments = [];
        continue;
      }
      const c = /^\s+\/\/ ?(.*)$/.exec(line);
      if (c) {
        comments.push(c[1]!);
        continue;
      }
      if (line.trim() === '') {
        comments = [];
        continue;
      }
      const f = /^\s+(?:(\w+)\s+)?([^\s`]+)\s*(`[^`]*`)?\s*(?:\/\/.*)?$/.exec(line);
      if (!f) throw new Error(`unparsed field line in ${cur.name}: ${line}`);
      cur.fields!.push(f[1] ? { name: f[1], goType: f[2]!, tag: f[3] ?? '', comments } : { name: '', goType: f[2]!, tag: f[3] ?? '', comments });
      comments = [];
      continue;
    }
    const c = /^\/\/ ?(.*)$/.exec(line);
    if (c) {
      comments.push(c[1]!);
      continue;
    }
    const empty = /^type (\w+) struct ?\{\}$/.exec(line);
    if (empty) {
      into.types.set(empty[1]!, { name: empty[1]!, comments, fields: [] });
      comments = [];
      continue;
    }
    const s = /^type (\w+) struct \{$/.exec(line);
    // The type's comments are its own: its first field starts a new comment block.
    if (s) {
      cur = { name: s[1]!, comments, fields: [] };
      comments = [];
      continue;
    }
    const a = /^type (\w+) =? ?(\S+)$/.exec(line);
    if (a) into.types.set(a[1]!, { name: a[1]!, comments, alias: a[2]! });
    comments = [];
  }
}

function parseDocs(text: string, into: Parsed): void {
  let cur: Map<string, string> | undefined;
  for (const line of text.split('\n')) {
    const m = /^var map_(\w+) = map\[string\]string\{$/.exec(line);
    if (m) {
      cur = new Map();
      into.docs.set(m[1]!, cur);
      continue;
    }
    if (line === '}') {
      cur = undefined;
      continue;
    }
    const e = /^\s+"(\w*)":\s+("(?:[^"\\]|\\.)*"),$/.exec(line);
    if (e && cur) cur.set(e[1]!, JSON.parse(e[2]!) as string);
  }
}

/** kube-openapi's rendering of doc comments: markers dropped, `---` ends, paragraphs kept. */
function fmtDoc(lines: string[]): string {
  const out: string[] = [];
  for (const l of lines) {
    if (l.trim() === '---') break;
    if (l.startsWith('+') || /^TODO/.test(l.trim())) continue;
    out.push(l.trimEnd());
  }
  let s = '';
  for (const l of out) {
    if (l === '') s += '\n\n';
    else if (s === '' || s.endsWith('\n')) s += l;
    else if (/^\s|^-/.test(l)) s += '\n' + l;
    else s += ' ' + l;
  }
  return s.trim().replace(/\n{3,}/g, '\n\n');
}

function markerValues(comments: string[], name: string): string[] {
  return comments.flatMap((l) => {
    const m = new RegExp(`^\\+${name}=(.*)$`).exec(l.trim());
    return m ? [m[1]!.trim()] : [];
  });
}

const parsed = new Map<string, Parsed>();
for (const p of READ) {
  const into: Parsed = { types: new Map(), imports: new Map(), docs: new Map() };
  const files = git(p.repo, 'ls-tree', '--name-only', 'HEAD', `${p.dir}/`)
    .split('\n')
    .filter((f) => /\/[a-z_]+\.go$/.test(f) && !/_test\.go$|zz_generated|generated\.pb\.go|_fuzz\.go/.test(f));
  for (const f of files) {
    const text = git(p.repo, 'show', `HEAD:${f}`);
    if (f.endsWith('types_swagger_doc_generated.go')) parseDocs(text, into);
    else parseGo(text, into);
  }
  parsed.set(p.importPath, into);
}
const byImport = new Map(READ.map((p) => [p.importPath, p]));

type Want = (pkg: Pkg, name: string) => void;

/** A Go type expression as our TypeExpr; structs of known packages are queued through `want`. */
function typeExpr(pkg: Pkg, go: string, want: Want): string {
  if (go.startsWith('*')) return typeExpr(pkg, go.slice(1), want);
  if (go === '[]byte') return 'bytes';
  if (go.startsWith('[]')) return `[]${typeExpr(pkg, go.slice(2), want)}`;
  const map = /^map\[([\w.]+)\](.+)$/.exec(go);
  if (map) return `{}${typeExpr(pkg, map[2]!, want)}`;
  if (BUILTIN[go]) return BUILTIN[go]!;
  let importPath = pkg.importPath;
  let name = go;
  const dot = go.indexOf('.');
  if (dot > 0) {
    const path = parsed.get(pkg.importPath)!.imports.get(go.slice(0, dot));
    if (!path) throw new Error(`unknown import ${go} in ${pkg.alias}`);
    importPath = path;
    name = go.slice(dot + 1);
  }
  const special = SPECIAL[`${importPath}.${name}`];
  if (special) return special;
  const target = byImport.get(importPath);
  if (!target) throw new Error(`type ${go} of ${pkg.alias} is in an unhandled package ${importPath}`);
  const raw = parsed.get(importPath)!.types.get(name);
  if (!raw) throw new Error(`type ${name} not found in ${importPath}`);
  if (raw.alias !== undefined) return typeExpr(target, raw.alias, want);
  want(target, name);
  return `${target.alias}.${name}`;
}

/**
 * What Go's encoding/json writes for a field holding its zero value, or
 * undefined when it omits it: `omitempty` omits empty scalars, pointers,
 * slices and maps but never a struct value (written `{}`, or by its own
 * MarshalJSON: Time `null`, Quantity `"0"`, IntOrString `0`, Duration
 * `"0s"`); `omitzero` omits every zero value; a field without either is
 * written: a nil pointer, slice or map as `null`.
 */
function zeroOf(goType: string, expr: string, tag: Tag): unknown {
  if (tag.omitzero) return undefined;
  if (goType.startsWith('*') || expr.startsWith('[]') || expr.startsWith('{}') || expr === 'bytes') return tag.omitempty ? undefined : null;
  switch (expr) {
    case 'time':
    case 'raw':
    case 'fields':
      return null;
    case 'quantity':
      return '0';
    case 'intstr':
      return 0;
    case 'string':
      if (/(^|\.)Duration$/.test(goType)) return '0s';
      return tag.omitempty ? undefined : '';
    case 'bool':
      return tag.omitempty ? undefined : false;
    case 'int32':
    case 'int64':
    case 'double':
      return tag.omitempty ? undefined : 0;
  }
  if (/^(.*\.)?JSON(SchemaPropsOr\w+)?$/.test(goType)) return null; // apiextensions' own JSON forms
  return {};
}

interface Tag {
  json: string;
  omitempty: boolean;
  omitzero: boolean;
  inline: boolean;
  ps?: string;
  pk?: string;
}
function parseTag(tag: string): Tag {
  const j = /json:"([^"]*)"/.exec(tag)?.[1];
  const parts = (j ?? '').split(',');
  const ps = /patchStrategy:"([^"]*)"/.exec(tag)?.[1];
  const pk = /patchMergeKey:"([^"]*)"/.exec(tag)?.[1];
  return {
    json: parts[0]!,
    omitempty: parts.includes('omitempty') || parts.includes('omitzero'),
    omitzero: parts.includes('omitzero'),
    inline: parts.includes('inline'),
    ...(ps ? { ps } : {}),
    ...(pk ? { pk } : {}),
  };
}

function markersOf(comments: string[], tag: Tag): Markers | undefined {
  const m: { -readonly [K in keyof Markers]: Markers[K] } = {};
  const lt = markerValues(comments, 'listType')[0];
  if (lt) m.lt = lt as Markers['lt'];
  const lk = markerValues(comments, 'listMapKey');
  if (lk.length) m.lk = lk;
  const mt = markerValues(comments, 'mapType')[0] ?? markerValues(comments, 'structType')[0];
  if (mt) m.mt = mt as Markers['mt'];
  if (tag.ps) m.ps = tag.ps;
  if (tag.pk) m.pk = tag.pk;
  return Object.keys(m).length ? m : undefined;
}

function buildType(pkg: Pkg, name: string, want: Want): TypeDef {
  const p = parsed.get(pkg.importPath)!;
  const raw = p.types.get(name)!;
  const docs = p.docs.get(name);
  if (ANY_TYPES.has(`${pkg.importPath}.${name}`)) return { d: docs?.get('') ?? fmtDoc(raw.comments), f: {}, any: true };
  const fields: Record<string, FieldDef> = {};
  const required: string[] = [];
  const zeros: Record<string, unknown> = {};
  const addFields = (owner: Pkg, t: RawType, ownerDocs: Map<string, string> | undefined) => {
    for (const f of t.fields ?? []) {
      const tag = parseTag(f.tag);
      if (tag.json === '-') continue;
      const embedded = f.name === '';
      if ((embedded && !tag.json) || tag.inline) {
        let go = f.goType.replace(/^\*/, '');
        let ip = owner.importPath;
        const dot = go.indexOf('.');
        if (dot > 0) {
          ip = parsed.get(owner.importPath)!.imports.get(go.slice(0, dot))!;
          go = go.slice(dot + 1);
        }
        const inner = parsed.get(ip)?.types.get(go);
        if (!inner) throw new Error(`inline type ${f.goType} of ${t.name} not found`);
        addFields(byImport.get(ip)!, inner, parsed.get(ip)!.docs.get(go));
        continue;
      }
      const json = tag.json || f.name;
      const doc = ownerDocs?.get(json) ?? fmtDoc(f.comments);
      const markers = markersOf(f.comments, tag);
      const expr = typeExpr(owner, f.goType, want);
      fields[json] = markers ? [expr, doc, markers] : [expr, doc];
      const zero = zeroOf(f.goType, expr, tag);
      if (zero !== undefined) zeros[json] = zero;
      const optional = tag.omitempty || f.comments.some((c) => /^\+(k8s:)?optional\b/.test(c.trim()));
      if (!optional) required.push(json);
    }
  };
  addFields(pkg, raw, docs);
  const mt = markerValues(raw.comments, 'structType')[0] ?? markerValues(raw.comments, 'mapType')[0];
  return {
    d: docs?.get('') ?? fmtDoc(raw.comments.map((c, i) => (i === 0 ? c.replace(new RegExp(`^${name} `), `${name} `) : c))),
    f: fields,
    ...(required.length ? { r: required } : {}),
    ...(Object.keys(zeros).length ? { z: zeros } : {}),
    ...(mt ? { mt: mt as TypeDef['mt'] } : {}),
  };
}

const out = new Map<string, Map<string, TypeDef>>(READ.map((p) => [p.alias, new Map()]));
const queue: Array<[Pkg, string]> = [];
const want: Want = (pkg, name) => {
  if (!out.get(pkg.alias)!.has(name) && !queue.some(([p, n]) => p === pkg && n === name)) queue.push([pkg, name]);
};
for (const p of READ) for (const r of p.roots) want(p, r);
while (queue.length) {
  const [pkg, name] = queue.shift()!;
  if (out.get(pkg.alias)!.has(name)) continue;
  out.get(pkg.alias)!.set(name, buildType(pkg, name, want));
}

const here = fileURLToPath(new URL('../gen/', import.meta.url));
const q = (s: string) => JSON.stringify(s);
for (const p of READ) {
  if (only && !only.includes(p.alias)) continue;
  const types = [...out.get(p.alias)!.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const body = types
    .map(([name, t]) => {
      const fields = Object.entries(t.f)
        .map(([k, f]) => `      ${q(k)}: [${q(f[0])}, ${q(f[1])}${f[2] ? `, ${JSON.stringify(f[2])}` : ''}],`)
        .join('\n');
      return `    ${name}: {\n      d: ${q(t.d)},\n${t.r ? `      r: ${JSON.stringify(t.r)},\n` : ''}${t.z ? `      z: ${JSON.stringify(t.z)},\n` : ''}${t.mt ? `      mt: ${q(t.mt)},\n` : ''}${t.any ? '      any: true,\n' : ''}      f: {\n${fields.replace(/^ {6}/gm, '        ')}\n      },\n    },`;
    })
    .join('\n');
  const text = `// Schema table for ${p.prefix}.
// Generated by lib/schema/tools/gen-schemas.ts from ${repoNames[p.repo]} ${p.dir} (Go types, tags,
// markers and swagger docs) at commit ${commits[p.repo]}. Regenerate, do not hand-edit.
import type { SchemaPackage } from '../types.js';

export const ${p.exportName}: SchemaPackage = {
  alias: ${q(p.alias)},
  prefix: ${q(p.prefix)},
  types: {
${body}
  },
};
`;
  writeFileSync(`${here}${p.file}`, text);
}
const index = `// Every generated schema package. Generated by lib/schema/tools/gen-schemas.ts.
import type { SchemaPackage } from '../types.js';
${ALL_PKGS.map((p) => `import { ${p.exportName} } from './${p.file.replace(/\.ts$/, '.js')}';`).join('\n')}

export const PACKAGES: readonly SchemaPackage[] = [${ALL_PKGS.map((p) => p.exportName).join(', ')}];
`;
writeFileSync(`${here}index.ts`, index);
console.log(
  READ.filter((p) => !only || only.includes(p.alias))
    .map((p) => `${p.alias}: ${out.get(p.alias)!.size} types`)
    .join(', '),
);
