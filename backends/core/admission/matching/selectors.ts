// namespaceSelector and objectSelector of webhooks and policies, as kube's
// namespace and object matchers read them: a cluster-scoped object (other
// than a Namespace) is never exempted by a namespace selector; a Namespace
// being created or updated is matched by its own new labels, any other
// request by the labels of its namespace as stored (the read cache first);
// an object selector matches the new or the old object's labels.
import { isPlainObject, type KObject } from '../../../../lib/api/meta.js';
import { notFound } from '../../../../lib/api/status.js';
import { labelSelectorFromObject, matchesLabels, type LabelSelector, type Labels } from '../../../../lib/api/selectors.js';
import type { CoreEnv } from '../../env.js';
import { objectKey } from '../../keys.js';
import { storeCall } from '../../storeerrors.js';
import { getCachedFirst } from '../../store/types.js';
import type { AdmissionAttributes } from '../types.js';

/** A parsed selector; `undefined` = empty (matches everything, no lookup needed). */
export type ParsedSelector = LabelSelector | undefined;

/** Parses a stored selector; absent or `{}` is the empty selector. */
export function parseSelector(json: unknown): ParsedSelector {
  if (!isPlainObject(json)) return undefined;
  const labels = json['matchLabels'];
  const exprs = json['matchExpressions'];
  const empty = (!isPlainObject(labels) || Object.keys(labels).length === 0) && (!Array.isArray(exprs) || exprs.length === 0);
  return empty ? undefined : labelSelectorFromObject(json);
}

function labelsOf(o: KObject | undefined): Labels | undefined {
  const l = o?.metadata?.labels;
  return isPlainObject(l) ? (l as Labels) : undefined;
}

/** The labels a namespace selector is matched against, or `cluster` when the request is cluster-scoped (never exempted). */
export async function namespaceLabels(env: CoreEnv, a: AdmissionAttributes): Promise<Labels | 'cluster'> {
  const isNamespace = a.resource.group === '' && a.resource.resource === 'namespaces';
  if (a.namespace === '' && !isNamespace) return 'cluster';
  if (isNamespace && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) return labelsOf(a.object) ?? {};
  const name = a.namespace || a.name;
  const nsType = env.registry.lookup('', 'v1', 'namespaces');
  if (!nsType) return {};
  const ns = await storeCall({ group: '', resource: 'namespaces' }, name, () => getCachedFirst(env.store, objectKey(nsType, '', name)));
  if (!ns) throw notFound({ group: '', resource: 'namespaces' }, name);
  return labelsOf(ns) ?? {};
}

/** Whether a namespace selector lets the request through; reads the namespace only for a non-empty selector. */
export async function matchesNamespaceSelector(env: CoreEnv, a: AdmissionAttributes, sel: ParsedSelector): Promise<boolean> {
  if (sel === undefined) return true;
  const labels = await namespaceLabels(env, a);
  return labels === 'cluster' || matchesLabels(sel, labels);
}

export function matchesObjectSelector(a: AdmissionAttributes, sel: ParsedSelector): boolean {
  if (sel === undefined) return true;
  const matches = (o: KObject | undefined) => o !== undefined && matchesLabels(sel, labelsOf(o) ?? {});
  return matches(a.object) || matches(a.oldObject);
}
