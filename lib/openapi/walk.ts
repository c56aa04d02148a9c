// The walkers both OpenAPI documents share: every path and operation a
// type serves (as OpenAPI v3 path items, with Kubernetes' vendor extensions
// and the write parameters kubectl looks for before it relies on server-side
// field validation) and the definitions of the types (lib/schema's structural
// schemas with their merge markers, or a custom resource's published schema).
// v2.ts and v3.ts build on these; neither imports the other's builder.
import type { ResourceType, Verb } from '../registry/types.js';
import { builtinSchemas, definitionName, type StructNode } from '../schema/index.js';
import { definitionsOf, type Flavor, type Gvk } from '../schema/openapi.js';
import { customDefinitions } from './custom.js';

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
