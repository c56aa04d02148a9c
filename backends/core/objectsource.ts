// The core backend's ObjectSource: reads straight from its store, for
// gateway components running in the same process.
import type { ObjectSource, ObjectWatch } from '../../lib/api/objectsource.js';
import type { KObject } from '../../lib/api/meta.js';
import type { ResourceType } from '../../lib/registry/types.js';
import type { CoreEnv } from './env.js';
import { listPrefix, objectKey } from './keys.js';
import { getCachedFirst, StoreError } from './store/types.js';

export function storeObjectSource(env: CoreEnv): ObjectSource {
  const typeOf = (group: string, resource: string): ResourceType => {
    const version = group === '' ? 'v1' : (env.registry.group(group)?.preferredVersion ?? '');
    const t = env.registry.lookup(group, version, resource);
    if (!t) throw new Error(`no served type ${resource}${group ? `.${group}` : ''}`);
    return t;
  };
  return {
    async get(group, resource, namespace, name): Promise<KObject | undefined> {
      return env.store.get(objectKey(typeOf(group, resource), namespace, name));
    },
    async lookup(group, resource, namespace, name): Promise<KObject | undefined> {
      return getCachedFirst(env.store, objectKey(typeOf(group, resource), namespace, name));
    },
    async list(group, resource, namespace) {
      const r = await env.store.list(listPrefix(typeOf(group, resource), namespace ?? ''));
      return { items: r.items, resourceVersion: String(r.rev) };
    },
    watch(group, resource, resourceVersion, onEvent, onError): ObjectWatch {
      const w = env.store.watch(listPrefix(typeOf(group, resource), ''), Number(resourceVersion), {
        event: (ev) => onEvent({ type: ev.type, object: ev.object }),
        error: (err: StoreError) => onError(err),
      });
      return { stop: () => w.stop() };
    },
  };
}
