// The Swagger 2.0 document (/openapi/v2): one document for every served type,
// its paths converted from the v3 operations and its definitions from
// lib/schema in the v2 flavour. Built once per registry.
import type { Registry } from '../registry/index.js';
import { makeDocument, type Document } from '../discovery/document.js';
import { pathsOfTypes, schemasOf } from './walk.js';

type Json = Record<string, unknown>;

const V3_REF = '#/components/schemas/';

/** A v3 schema fragment as v2: references re-pointed, allOf wrappers of one reference unwrapped. */
function schemaV2(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(schemaV2);
  if (typeof s !== 'object' || s === null) return s;
  const o = s as Json;
  if (typeof o['$ref'] === 'string') return { $ref: (o['$ref'] as string).replace(V3_REF, '#/definitions/') };
  if (Array.isArray(o['allOf']) && o['allOf'].length === 1) return schemaV2(o['allOf'][0]);
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, schemaV2(v)]));
}

function paramV2(p: Json): Json {
  const schema = (p['schema'] ?? {}) as Json;
  const { schema: _s, ...rest } = p;
  void _s;
  return { ...rest, ...(typeof schema['type'] === 'string' ? { type: schema['type'] } : { type: 'string' }), uniqueItems: true };
}

function operationV2(op: Json): Json {
  const { requestBody, responses, parameters, ...rest } = op as { requestBody?: Json; responses?: Record<string, Json>; parameters?: Json[] } & Json;
  const params = (parameters ?? []).map(paramV2);
  let consumes: string[] = ['*/*'];
  if (requestBody) {
    const content = requestBody['content'] as Record<string, { schema: unknown }>;
    consumes = Object.keys(content);
    params.unshift({ name: 'body', in: 'body', required: true, schema: schemaV2(Object.values(content)[0]!.schema) });
  }
  const out: Record<string, Json> = {};
  let produces: string[] = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
  for (const [code, r] of Object.entries(responses ?? {})) {
    const content = r['content'] as Record<string, { schema: unknown }> | undefined;
    if (content) produces = Object.keys(content);
    out[code] = { description: r['description'], ...(content ? { schema: schemaV2(Object.values(content)[0]!.schema) } : {}) };
  }
  // No empty lists (kube's JSON omits them): the protobuf form could not carry one.
  return { ...rest, consumes, produces, schemes: ['https'], ...(params.length > 0 ? { parameters: params } : {}), responses: out };
}

export function buildOpenApiV2(registry: Registry, serverVersion: string): Document {
  const types = registry.all();
  const paths: Record<string, Json> = {};
  for (const [path, item] of Object.entries(pathsOfTypes(types))) {
    const converted: Json = {};
    for (const [k, v] of Object.entries(item)) converted[k] = k === 'parameters' ? (v as Json[]).map(paramV2) : operationV2(v as Json);
    paths[path] = converted;
  }
  return makeDocument({
    swagger: '2.0',
    info: { title: 'Kubernetes', version: serverVersion },
    paths,
    definitions: schemasOf(types, 'v2'),
    securityDefinitions: { BearerToken: { description: 'Bearer Token authentication', type: 'apiKey', name: 'authorization', in: 'header' } },
    security: [{ BearerToken: [] }],
  });
}
