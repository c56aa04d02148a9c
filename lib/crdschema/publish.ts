// A CRD version's schema as kube-apiserver publishes it in /openapi/v2 and
// /openapi/v3 (apiextensions' openapi builder): the structural schema with
// int-or-string unfolded, apiVersion/kind/metadata added (also inside
// embedded resources), the group-version-kind extension, and the list kind
// beside it; for v2 what Swagger 2.0 cannot say is dropped (value
// validations, nullable types, preserve-unknown-fields' members).
import { builtinSchemaOf } from '../schema/index.js';
import type { Props } from './props.js';

type Json = Record<string, unknown>;
export type Flavor = 'v2' | 'v3';

export interface PublishRef {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const ref = (name: string, flavor: Flavor) => (flavor === 'v2' ? `#/definitions/${name}` : `#/components/schemas/${name}`);

/** The descriptions kube takes from TypeMeta, PartialObjectMetadata and its list (the same texts the built-in tables hold). */
function descriptions(): { apiVersion: string; kind: string; metadata: string; listMetadata: string } {
  const pod = builtinSchemaOf('', 'v1', 'Pod');
  const list = builtinSchemaOf('', 'v1', 'PodList');
  return {
    apiVersion: pod?.fields.get('apiVersion')?.description ?? '',
    kind: pod?.fields.get('kind')?.description ?? '',
    metadata: pod?.fields.get('metadata')?.description ?? '',
    listMetadata: list?.fields.get('metadata')?.description ?? '',
  };
}

// The members a structural schema keeps when kube turns it back into OpenAPI (ToKubeOpenAPI).
const KEPT = [
  'description',
  'type',
  'format',
  'title',
  'default',
  'example',
  'externalDocs',
  'nullable',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
];

const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];

function copyKept(p: Props, out: Json): void {
  for (const k of KEPT) if (Object.hasOwn(p.raw, k) && p.raw[k] !== undefined) out[k] = structuredClone(p.raw[k]);
}

function nested(p: Props): Json {
  const out: Json = {};
  copyKept(p, out);
  if (p.items && !Array.isArray(p.items)) out.items = nested(p.items as Props);
  if (p.properties) out.properties = Object.fromEntries([...p.properties].map(([k, v]) => [k, nested(v)]));
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) if (p[k]?.length) out[k] = p[k]!.map(nested);
  if (p.not) out.not = nested(p.not);
  return out;
}

function structural(p: Props, flavor: Flavor, d: ReturnType<typeof descriptions>): Json {
  const out: Json = {};
  copyKept(p, out);
  const v2 = flavor === 'v2';
  const drop = v2 && (p.nullable === true || p.xPreserveUnknownFields === true);
  if (p.items && !Array.isArray(p.items) && !drop) out.items = structural(p.items as Props, flavor, d);
  if (p.properties && !drop) {
    out.properties = Object.fromEntries([...p.properties].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, structural(v, flavor, d)]));
  }
  if (p.additionalProperties !== undefined) {
    out.additionalProperties = typeof p.additionalProperties === 'object' ? structural(p.additionalProperties, flavor, d) : p.additionalProperties;
  }
  if (!v2) {
    for (const k of ['allOf', 'anyOf', 'oneOf'] as const) if (p[k]?.length) out[k] = p[k]!.map(nested);
    if (p.not) out.not = nested(p.not);
    // Unfold: int-or-string says so in anyOf, unless it already does.
    if (p.xIntOrString && JSON.stringify(p.raw.anyOf) !== JSON.stringify(INT_OR_STRING_ANY_OF)) {
      const first = (p.allOf?.[0]?.raw as Json | undefined)?.anyOf;
      if (JSON.stringify(first) !== JSON.stringify(INT_OR_STRING_ANY_OF)) {
        if (!p.anyOf) out.anyOf = structuredClone(INT_OR_STRING_ANY_OF);
        else out.allOf = [{ anyOf: structuredClone(INT_OR_STRING_ANY_OF) }, ...((out.allOf as Json[] | undefined) ?? [])];
      }
    }
  } else {
    if (p.nullable) {
      delete out.type;
      delete out.nullable;
    }
    if (p.xPreserveUnknownFields && out.type === 'object') delete out.type;
    if (out.type === 'array' && out.items === undefined) delete out.type;
    const nullables = [...(p.properties ?? [])].filter(([, v]) => v.nullable).map(([k]) => k);
    if (Array.isArray(out.required) && nullables.length) out.required = (out.required as string[]).filter((r) => !nullables.includes(r));
    if (typeof p.additionalProperties === 'object' && p.additionalProperties.nullable) delete out.required;
  }
  if (p.xEmbeddedResource && !(v2 && p.xPreserveUnknownFields)) {
    const props = (out.properties ??= {}) as Json;
    props.apiVersion = {
      description:
        'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
      type: 'string',
    };
    props.kind = {
      description:
        'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
      type: 'string',
    };
    props.metadata = { description: d.metadata, $ref: ref(OBJECT_META, flavor) };
    const required = [...((out.required as string[] | undefined) ?? [])];
    for (const k of ['kind', 'apiVersion']) if (!required.includes(k)) required.push(k);
    out.required = required;
  }
  return out;
}

/** The kind's and the list kind's definitions, keyed by kube's definition names (`com.example.stable.v1.CronTab`). */
export function publishedDefinitions(p: Props | undefined, r: PublishRef, flavor: Flavor): Record<string, Json> {
  const d = descriptions();
  const name = `${r.group.split('.').reverse().join('.')}.${r.version}`;
  let kind: Json;
  if (!p || (flavor === 'v2' && p.xPreserveUnknownFields)) kind = { type: 'object' };
  else {
    kind = structural(p, flavor, d);
    const props = (kind.properties ??= {}) as Json;
    props.metadata = { description: d.metadata, $ref: ref(OBJECT_META, flavor) };
    props.apiVersion = { description: d.apiVersion, type: 'string' };
    props.kind = { description: d.kind, type: 'string' };
  }
  kind['x-kubernetes-group-version-kind'] = [{ group: r.group, kind: r.kind, version: r.version }];
  const list: Json = {
    description: `${r.listKind} is a list of ${r.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { description: d.apiVersion, type: 'string' },
      items: {
        description: `List of ${r.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        type: 'array',
        items: { $ref: ref(`${name}.${r.kind}`, flavor) },
      },
      kind: { description: d.kind, type: 'string' },
      metadata: { description: d.listMetadata, $ref: ref(LIST_META, flavor) },
    },
    'x-kubernetes-group-version-kind': [{ group: r.group, kind: r.listKind, version: r.version }],
  };
  return { [`${name}.${r.kind}`]: kind, [`${name}.${r.listKind}`]: list };
}
