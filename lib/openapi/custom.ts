// The OpenAPI definitions of a custom resource: its CRD version's schema as
// kube publishes it (apiVersion, kind and metadata added, the group version
// kind marked), and the list kind around it.
import type { ResourceType } from '../registry/types.js';
import { definitionName } from '../schema/index.js';
import type { Flavor } from '../schema/openapi.js';

type Json = Record<string, unknown>;

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const API_VERSION = {
  type: 'string',
  description:
    'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
};
const KIND = {
  type: 'string',
  description:
    'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
};

function refTo(name: string, flavor: Flavor): Json {
  return { $ref: flavor === 'v3' ? `#/components/schemas/${name}` : `#/definitions/${name}` };
}

function metaProp(name: string, flavor: Flavor, description: string): Json {
  return flavor === 'v3' ? { allOf: [refTo(name, flavor)], description, default: {} } : { ...refTo(name, flavor), description };
}

/** The definitions of a type with a published `openapi` schema (custom resources), by definition name. */
export function customDefinitions(t: ResourceType, flavor: Flavor): Record<string, Json> {
  const schema = (t.openapi ?? {}) as Json;
  const props = (schema['properties'] && typeof schema['properties'] === 'object' ? schema['properties'] : {}) as Json;
  const gvk = (kind: string) => [{ group: t.group, kind, version: t.version }];
  const kindDef: Json = {
    ...schema,
    type: 'object',
    properties: {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: metaProp(
        OBJECT_META,
        flavor,
        "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      ),
      ...props,
    },
    'x-kubernetes-group-version-kind': gvk(t.kind),
  };
  const listDef: Json = {
    description: `${t.listKind} is a list of ${t.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: API_VERSION,
      items: {
        type: 'array',
        description: `List of ${t.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        items: refTo(definitionName(t.group, t.version, t.kind), flavor),
      },
      kind: KIND,
      metadata: metaProp(
        LIST_META,
        flavor,
        'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
      ),
    },
    'x-kubernetes-group-version-kind': gvk(t.listKind),
  };
  return { [definitionName(t.group, t.version, t.kind)]: kindDef, [definitionName(t.group, t.version, t.listKind)]: listDef };
}
