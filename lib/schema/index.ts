// The schemas of the built-in kinds: one SchemaModel built from the generated
// tables at first use, and the lookups the registry and handlers need.
import { PACKAGES } from './gen/index.js';
import { SchemaModel, type StructNode } from './model.js';
import { accessV1alpha1 } from './access.js';

export type { Node, StructNode, ListNode, MapNode, ScalarNode, AnyNode, Field } from './model.js';
export { SchemaModel, childOf } from './model.js';

/** kube's own groups named without the `.k8s.io` suffix (their definitions are `io.k8s.api.apps.v1.…`). */
const SHORT_BUILTIN_GROUPS = new Set(['apps', 'batch', 'autoscaling', 'policy']);

/** The definition name Kubernetes uses for a kind (`io.k8s.api.core.v1.Pod`). */
export function definitionName(group: string, version: string, kind: string): string {
  if (group === 'apiregistration.k8s.io') return `io.k8s.kube-aggregator.pkg.apis.apiregistration.${version}.${kind}`;
  if (group === 'apiextensions.k8s.io') return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}.${kind}`;
  // A group outside k8s.io (custom resources, Gatehouse's own) is named as kube names custom resources' schemas: the reversed group (stable.example.com → com.example.stable).
  if (group !== '' && !group.endsWith('.k8s.io') && !SHORT_BUILTIN_GROUPS.has(group)) return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
  const pkg = group === '' ? 'core' : group.split('.')[0]!;
  return `io.k8s.api.${pkg}.${version}.${kind}`;
}

let model: SchemaModel | undefined;

/** The model of every built-in schema, built once per process. */
export function builtinSchemas(): SchemaModel {
  model ??= new SchemaModel([...PACKAGES, accessV1alpha1]);
  return model;
}

/** The schema of a built-in kind; undefined when the tables have none. */
export function builtinSchemaOf(group: string, version: string, kind: string): StructNode | undefined {
  return builtinSchemas().byDefinition(definitionName(group, version, kind));
}
