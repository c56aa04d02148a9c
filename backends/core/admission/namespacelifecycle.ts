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
import { storeCall } from '../storeerrors.js';
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
    return requireActive(a, env, nsType);
  },
};

async function requireActive(a: AdmissionAttributes, env: CoreEnv, nsType: ResourceType): Promise<void> {
  const r = a.resource;
  const namespace = a.namespace;
  const ns = await storeCall({ group: '', resource: 'namespaces' }, namespace, () => getCachedFirst(env.store, objectKey(nsType, '', namespace)));
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
