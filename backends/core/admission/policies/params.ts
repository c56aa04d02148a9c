// kube's CollectParams: the param objects a binding gives its policy — none
// asked (one evaluation with params null), the one its paramRef names, or
// every one its selector matches — in the request's namespace unless the
// paramRef names one; none found is an error under parameterNotFoundAction
// Deny. Read from the watch-fed cache, and from the store when the cache
// does not have a named one yet (kube reads it directly then too).
import type { KObject } from '../../../../lib/api/meta.js';
import { matchesLabels, type Labels } from '../../../../lib/api/selectors.js';
import type { Registry } from '../../../../lib/registry/index.js';
import type { ResourceType } from '../../../../lib/registry/types.js';
import type { CoreEnv } from '../../env.js';
import { objectKey } from '../../keys.js';
import type { AdmissionAttributes } from '../types.js';
import type { PolicyCache } from './cache.js';
import type { CompiledBinding, CompiledPolicy } from './compiled.js';

/** The served type of a policy's paramKind; throws kube's configuration error when none is served. */
export function paramType(pk: { readonly apiVersion: string; readonly kind: string }, registry: Registry): ResourceType {
  const slash = pk.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : pk.apiVersion.slice(0, slash);
  const version = slash < 0 ? pk.apiVersion : pk.apiVersion.slice(slash + 1);
  const t = registry.byKind(group, version, pk.kind);
  if (!t) throw new Error(`failed to find resource referenced by paramKind: '${group}/${version}, Kind=${pk.kind}'`);
  return t;
}

export async function collectParams(
  policy: CompiledPolicy,
  binding: CompiledBinding,
  a: AdmissionAttributes,
  env: CoreEnv,
  cache: PolicyCache,
): Promise<ReadonlyArray<KObject | null>> {
  const pk = policy.paramKind;
  const ref = binding.paramRef;
  if (!pk || !ref) return [null];
  const t = paramType(pk, env.registry);
  let namespace = '';
  if (t.namespaced) {
    namespace = ref.namespace || a.namespace;
    if (namespace === '') throw new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  } else if (ref.namespace !== '') {
    throw new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  const objects = await cache.paramObjects(t.group, t.plural);
  let params: KObject[];
  if (ref.name !== '') {
    const found = objects.items.get(`${namespace}/${ref.name}`) ?? (await env.store.get(objectKey(t, namespace, ref.name)));
    params = found ? [found] : [];
  } else {
    const sel = ref.selector;
    params = [];
    for (const o of objects.items.values()) {
      if ((o.metadata.namespace ?? '') !== namespace) continue;
      if (sel === 'everything' || sel === undefined || matchesLabels(sel, (o.metadata.labels ?? {}) as Labels)) params.push(o);
    }
  }
  if (params.length === 0 && ref.notFound === 'Deny') throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
  return params;
}
