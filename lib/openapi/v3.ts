// OpenAPI v3 documents per group/version, built from the registry: every
// path and operation a type serves, with Kubernetes' vendor extensions and
// the write parameters (dryRun, fieldManager, fieldValidation) that kubectl
// looks for before it relies on server-side field validation, and the
// structural schemas of lib/schema (with their merge markers) for
// `kubectl explain` and kubectl's client-side apply.
import { createHash } from 'node:crypto';
import type { Registry } from '../registry/index.js';
import { derived, type RegistrySource } from '../registry/live.js';
import type { ResourceType, Verb } from '../registry/types.js';
import { makeDocument, type Document } from '../discovery/document.js';
import { builtinSchemas, definitionName, type StructNode } from '../schema/index.js';
import { definitionsOf, type Flavor, type Gvk } from '../schema/openapi.js';
import { buildOpenApiV2 } from './v2.js';
import { customDefinitions } from './custom.js';
import { encodeOpenApiV2 } from './v2proto.js';

export { definitionName };

type Json = Record<string, unknown>;

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const STATUS = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';
const DELETE_OPTIONS = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
const PATCH = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

function queryParam(name: string, description: string, type = 'string'): Json {
  return { name, in: 'query', description, schema: { type, uniqueItems: true } };
}

const WRITE_PARAMS = [
  queryParam('dryRun', 'When present, indicates that modifications should not be persisted. Valid values are: All'),
  queryParam('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
  queryParam(
    'fieldValidation',
    'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict',
  ),
];
const LIST_PARAMS = [
  'allowWatchBookmarks',
  'continue',
  'fieldSelector',
  'labelSelector',
  'limit',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
  'watch',
].map((n) =>
  queryParam(
    n,
    `${n} of the list or watch`,
    ['allowWatchBookmarks', 'sendInitialEvents', 'watch'].includes(n) ? 'boolean' : ['limit', 'timeoutSeconds'].includes(n) ? 'integer' : 'string',
  ),
);
const PATH_NAME = { name: 'name', in: 'path', required: true, description: 'name of the object', schema: { type: 'string', uniqueItems: true } };
const PATH_NAMESPACE = {
  name: 'namespace',
  in: 'path',
  required: true,
  description: 'object name and auth scope, such as for teams and projects',
  schema: { type: 'string', uniqueItems: true },
};
const PRETTY = queryParam('pretty', "If 'true', then the output is pretty printed.");

const JSON_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

function content(types: readonly string[], schema: Json): Json {
  return Object.fromEntries(types.map((t) => [t, { schema }]));
}

function operation(
  t: ResourceType,
  action: string,
  verbWord: string,
  scope: string,
  params: Json[],
  body: Json | undefined,
  response: Json,
  code = '200',
): Json {
  const gvk = { group: t.group, version: t.version, kind: t.kind };
  return {
    tags: [`${t.group || 'core'}_${t.version}`],
    description: `${verbWord} ${t.kind}`,
    operationId: `${action}${scope}${t.kind}`,
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(body ? { requestBody: { content: content(action === 'patch' ? PATCH_TYPES : JSON_TYPES, body), required: true } } : {}),
    responses: { [code]: { description: 'OK', content: content(JSON_TYPES, response) }, '401': { description: 'Unauthorized' } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  };
}

function pathsOf(t: ResourceType): Record<string, Json> {
  const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  const scope = t.namespaced ? 'Namespaced' : '';
  const coll = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
  const item = `${coll}/{name}`;
  const has = (v: Verb) => t.verbs.includes(v);
  const obj = ref(definitionName(t.group, t.version, t.kind));
  const list = ref(definitionName(t.group, t.version, t.listKind));
  const nsParam = t.namespaced ? [PATH_NAMESPACE] : [];
  const paths: Record<string, Json> = {};
  const c: Json = { parameters: [...nsParam, PRETTY] };
  if (has('list')) c['get'] = operation(t, 'list', 'list or watch objects of kind', scope, LIST_PARAMS, undefined, list);
  if (has('create')) c['post'] = operation(t, 'post', 'create a', scope, WRITE_PARAMS, obj, obj, '201');
  if (has('deletecollection'))
    c['delete'] = operation(
      t,
      'deletecollection',
      'delete collection of',
      scope,
      [...LIST_PARAMS, ...WRITE_PARAMS.slice(0, 1)],
      ref(DELETE_OPTIONS),
      ref(STATUS),
    );
  paths[coll] = c;
  const i: Json = { parameters: [PATH_NAME, ...nsParam, PRETTY] };
  if (has('get')) i['get'] = operation(t, 'get', 'read the specified', scope, [], undefined, obj);
  if (has('update')) i['put'] = operation(t, 'put', 'replace the specified', scope, WRITE_PARAMS, obj, obj);
  if (has('patch'))
    i['patch'] = operation(
      t,
      'patch',
      'partially update the specified',
      scope,
      [...WRITE_PARAMS, queryParam('force', 'Force is going to "force" Apply requests.', 'boolean')],
      ref(PATCH),
      obj,
    );
  if (has('delete')) i['delete'] = operation(t, 'delete', 'delete a', scope, WRITE_PARAMS.slice(0, 1), ref(DELETE_OPTIONS), ref(STATUS));
  paths[item] = i;
  for (const sub of t.subresources) {
    const s: Json = { parameters: [PATH_NAME, ...nsParam, PRETTY] };
    if (sub.verbs.includes('get')) s['get'] = operation(t, 'get', `read ${sub.name} of the specified`, `${scope}${cap(sub.name)}`, [], undefined, obj);
    if (sub.verbs.includes('update'))
      s['put'] = operation(t, 'put', `replace ${sub.name} of the specified`, `${scope}${cap(sub.name)}`, WRITE_PARAMS, obj, obj);
    if (sub.verbs.includes('patch'))
      s['patch'] = operation(t, 'patch', `partially update ${sub.name} of the specified`, `${scope}${cap(sub.name)}`, WRITE_PARAMS, ref(PATCH), obj);
    paths[`${item}/${sub.name}`] = s;
  }
  return paths;
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The structs a set of types serves (kinds, list kinds, subresource kinds, meta types) and their GVKs. */
export function rootsOf(types: readonly ResourceType[]): { roots: StructNode[]; gvks: Map<string, Gvk[]> } {
  const model = builtinSchemas();
  const roots: StructNode[] = [];
  const gvks = new Map<string, Gvk[]>();
  const add = (group: string, version: string, kind: string, node?: StructNode) => {
    const def = definitionName(group, version, kind);
    const s = node ?? model.byDefinition(def);
    if (!s) return;
    roots.push(s);
    const list = gvks.get(s.definition) ?? [];
    if (!list.some((g) => g.group === group && g.version === version && g.kind === kind)) list.push({ group, version, kind });
    gvks.set(s.definition, list);
  };
  for (const t of types) {
    add(t.group, t.version, t.kind, t.schema);
    add(t.group, t.version, t.listKind);
    for (const sub of t.subresources) if (sub.kind !== t.kind) add(sub.group ?? t.group, sub.version ?? t.version, sub.kind);
  }
  for (const name of [OBJECT_META, LIST_META, STATUS, DELETE_OPTIONS, PATCH]) {
    const s = model.byDefinition(name);
    if (s) roots.push(s);
  }
  return { roots, gvks };
}

/** The definitions of the types: generated from schema nodes, or a custom resource's published schema. */
export function schemasOf(types: readonly ResourceType[], flavor: Flavor = 'v3'): Record<string, Json> {
  const { roots, gvks } = rootsOf(types.filter((t) => !t.openapi));
  const defs = definitionsOf(roots, flavor, gvks);
  for (const t of types) if (t.openapi) Object.assign(defs, customDefinitions(t, flavor));
  return defs;
}

/** Every path the types serve, as OpenAPI v3 path items (the v2 document converts them). */
export function pathsOfTypes(types: readonly ResourceType[]): Record<string, Json> {
  return Object.assign({}, ...types.map(pathsOf)) as Record<string, Json>;
}

/** A group-version document; its ETag is its `hash` quoted, as kube-apiserver's are. */
export interface GroupVersionDocument extends Document {
  /** Upper-case hex SHA-512 of the body: the `?hash=` of its URL in the index. */
  readonly hash: string;
}

export interface OpenApiV3 {
  /** GET /openapi/v3: the index of group-version documents. */
  readonly root: Document;
  /** GET /openapi/v3/<api/v1 | apis/g/v>. */
  document(path: string): GroupVersionDocument | undefined;
  /** GET /openapi/v2: the Swagger 2.0 document, built at first use. */
  v2(): Document;
  /** The same document in gnostic's protobuf form, encoded once at first use. */
  v2Protobuf(): Buffer;
}

export function buildOpenApiV3(registry: Registry, serverVersion: string): OpenApiV3 {
  const docs = new Map<string, GroupVersionDocument>();
  const gvs: Array<[string, string]> = [
    ...registry.coreVersions().map((v) => ['', v] as [string, string]),
    ...registry.groups().flatMap((g) => g.versions.map((v) => [g.name, v] as [string, string])),
  ];
  const index: Record<string, { serverRelativeURL: string }> = {};
  for (const [group, version] of gvs) {
    const types = registry.resourcesOf(group, version);
    const path = group ? `apis/${group}/${version}` : `api/${version}`;
    const doc = makeDocument({
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: serverVersion },
      paths: pathsOfTypes(types),
      components: { schemas: schemasOf(types) },
    });
    const hash = createHash('sha512').update(doc.body).digest('hex').toUpperCase();
    docs.set(path, Object.freeze({ ...doc, etag: `"${hash}"`, hash }));
    index[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
  }
  const root = makeDocument({ paths: index });
  let v2: Document | undefined;
  let v2Protobuf: Buffer | undefined;
  const v2Json = () => (v2 ??= buildOpenApiV2(registry, serverVersion));
  return {
    root,
    document: (path) => docs.get(path),
    v2: v2Json,
    v2Protobuf: () => (v2Protobuf ??= encodeOpenApiV2(JSON.parse(v2Json().body) as Record<string, unknown>)),
  };
}

/** The documents of the registry in force, rebuilt once per registry swap (custom resources), never per request. */
export function liveOpenApiV3(registry: RegistrySource, serverVersion: string): OpenApiV3 {
  const current = derived(registry, (r) => buildOpenApiV3(r, serverVersion));
  return {
    get root() {
      return current().root;
    },
    document: (path) => current().document(path),
    v2: () => current().v2(),
    v2Protobuf: () => current().v2Protobuf(),
  };
}
