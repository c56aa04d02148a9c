// NamespaceLifecycle, the built-in validating plugin every backend runs:
// an object is created only in an existing namespace that is not being
// terminated. The namespace is read as kube's plugin reads it: from the
// cache, live only when the cache lacks it. A namespace another process
// marked terminating looks active here until its change reaches this
// process's cache (the feed's lag, milliseconds): the window kube's
// informer-based check has too. (A consistent read would not close it
// either: the check and the create are two steps.) Deleting a protected
// namespace is refused by the delete handler before it reads anything
// (handlers/delete.ts).
import { forbiddenMessage, notFound } from '../../../lib/api/status.js';
import { objectKey } from '../keys.js';
import { storeCall, storeFailure } from '../storeerrors.js';
import type { KObject } from '../../../lib/api/meta.js';
import { getCachedFirst } from '../store/types.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import type { AdmissionAttributes, ValidatingPlugin } from './types.js';

export const namespaceLifecycle: ValidatingPlugin = {
  name: 'NamespaceLifecycle',
  // Synchronous for every write but a create in a namespace (run.ts awaits only a promise).
  validate(a, env) {
    const r = a.resource;
    if (a.operation !== 'CREATE' || a.subresource !== '' || a.namespace === '' || (r.group === '' && r.resource === 'namespaces')) return;
    // As kube's plugin: an access review says nothing about the namespace, so its state is not revealed either.
    if (r.group === 'authorization.k8s.io' && r.resource === 'localsubjectaccessreviews') return;
    // A backend without namespaces of its own (a sample backend behind the gateway) has no lifecycle to enforce.
    const nsType = env.registry.lookup('', 'v1', 'namespaces');
    if (!nsType) return;
    // A store that holds its state in this process answers at once (Store.getNow, what get(key, 0) reads):
    // a create in an existing namespace then takes no promise turn, no async function and no store
    // wrapper's closures for this check. Not found: the live read follows, as getCachedFirst's does.
    const getNow = env.store.getNow;
    if (getNow === undefined) return requireActive(a, env, nsType);
    const key = namespaceKey(nsType, a.namespace);
    let ns: KObject | undefined;
    try {
      ns = getNow(key);
    } catch (err) {
      throw storeFailure(err, NAMESPACES, a.namespace);
    }
    if (ns === undefined) return storeCall(NAMESPACES, a.namespace, () => env.store.get(key)).then((live) => requireActiveNs(a, live));
    requireActiveNs(a, ns);
  },
};

const NAMESPACES = { group: '', resource: 'namespaces' };

// The last namespace's store key: creates come in one namespace after another, and a key kept is built,
// flattened and hashed once, not per create (its concatenation, the metrics' and the store's reads of it: ~1k instructions).
let lastNamespace = '';
let lastNsType: ResourceType | undefined;
let lastKey = '';

function namespaceKey(nsType: ResourceType, namespace: string): string {
  if (namespace === lastNamespace && nsType === lastNsType) return lastKey;
  lastKey = objectKey(nsType, '', namespace);
  lastNamespace = namespace;
  lastNsType = nsType;
  return lastKey;
}

async function requireActive(a: AdmissionAttributes, env: CoreEnv, nsType: ResourceType): Promise<void> {
  const namespace = a.namespace;
  requireActiveNs(a, await storeCall(NAMESPACES, namespace, () => getCachedFirst(env.store, objectKey(nsType, '', namespace))));
}

/** Refuses a create in `ns` (undefined: the namespace does not exist) unless it is active. */
function requireActiveNs(a: AdmissionAttributes, ns: KObject | undefined): void {
  const r = a.resource;
  const namespace = a.namespace;
  if (!ns) throw notFound({ group: '', resource: 'namespaces' }, namespace);
  if (ns.metadata.deletionTimestamp) {
    const what = `${r.group ? `${r.resource}.${r.group}` : r.resource}${a.name ? ` "${a.name}"` : ''}`;
    throw forbiddenMessage(`${what} is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`, {
      name: a.name,
      group: r.group,
      kind: r.resource,
      causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
    });
  }
}
