// The one place a written object takes kube's key order (lib/schema/keyorder.ts):
// every create and update the store receives, and a dry run's answer, so
// reads, lists and watches serve what the store keeps and pay nothing.
// Built-in kinds: Go's struct order from the schema tables, maps sorted;
// custom resources: every object's keys sorted (kube keeps them unstructured);
// types with neither (the sample backend's) as written.
import type { KObject } from '../../lib/api/meta.js';
import type { Registry } from '../../lib/registry/index.js';
import type { ResourceType } from '../../lib/registry/types.js';
import { inSortedOrder, inStructOrder, inStructOrderSlotted, withResourceVersionSlot } from '../../lib/schema/keyorder.js';
import type { StructNode } from '../../lib/schema/index.js';
import type { Store } from './store/types.js';

/**
 * `obj` (of type `t`, in `t`'s version) in kube's key order, with (`slot`)
 * the `metadata.resourceVersion` member the store stamps in its place. `obj`
 * itself when already so; never written into.
 */
export function inKubeOrder(t: ResourceType | undefined, obj: KObject, slot = true): KObject {
  let out: KObject;
  let objectMeta: StructNode | undefined;
  if (t?.crd !== undefined) out = inSortedOrder(obj);
  else if (t?.schema) {
    const meta = t.schema.fields.get('metadata')?.node;
    objectMeta = meta?.kind === 'struct' ? meta : undefined;
    if (!objectMeta || !slot) return inStructOrder(t.schema, obj);
    // The slot made in struct order's rebuild of metadata; the check below adds it where that could not.
    out = inStructOrderSlotted(t.schema, obj, 'metadata', 'resourceVersion');
  } else return obj;
  if (!slot) return out;
  const metadata = out.metadata as Record<string, unknown> | undefined;
  if (typeof metadata !== 'object' || metadata === null) return out;
  const slotted = withResourceVersionSlot(metadata, objectMeta);
  if (slotted === metadata) return out;
  // A rebuilt `out` is this walk's own (struct order made it): the slotted metadata takes its place in it, no second copy.
  if (out !== obj) {
    out.metadata = slotted as KObject['metadata'];
    return out;
  }
  return { ...out, metadata: slotted };
}

/** The type a stored object is of: its key's group and plural, in the version of its apiVersion. */
function typeOfStored(registry: Registry, key: string, obj: KObject): ResourceType | undefined {
  const a = key.indexOf('/');
  const b = key.indexOf('/', a + 1);
  if (a < 0 || b < 0) return undefined;
  const group = key.slice(0, a) === 'core' ? '' : key.slice(0, a);
  const plural = key.slice(a + 1, b);
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
  const t = registry.lookup(group, version, plural);
  if (t) return t;
  // A custom resource stored in a version no longer served: still unstructured, sorted.
  const any = registry.all().find((x) => x.group === group && x.plural === plural);
  return any?.crd !== undefined ? any : undefined;
}

/**
 * typeOfStored, the last answer kept: a write whose registry and apiVersion are the last one's and whose key
 * starts with the last key's `<group>/<plural>/` is of the same type (no key cut into group and plural, no
 * lookup: ~1k instructions a create).
 */
class StoredTypes {
  private registry: Registry | undefined;
  private prefix = '';
  private apiVersion = '';
  private type: ResourceType | undefined;

  of(registry: Registry, key: string, obj: KObject): ResourceType | undefined {
    const apiVersion = obj.apiVersion;
    if (registry === this.registry && apiVersion === this.apiVersion && this.prefix !== '' && key.startsWith(this.prefix)) return this.type;
    const t = typeOfStored(registry, key, obj);
    const b = key.indexOf('/', key.indexOf('/') + 1);
    if (typeof apiVersion === 'string' && b > 0) {
      this.registry = registry;
      this.prefix = key.slice(0, b + 1);
      this.apiVersion = apiVersion;
      this.type = t;
    }
    return t;
  }
}

/** The store with every create and update in kube's key order (everything else passes through). */
export function keyOrderedStore(s: Store, registry: () => Registry): Store {
  const createNow = s.createNow;
  const types = new StoredTypes();
  return {
    create: (key, obj) => s.create(key, inKubeOrder(types.of(registry(), key, obj), obj)),
    createNow: createNow && ((key, obj) => createNow(key, inKubeOrder(types.of(registry(), key, obj), obj))),
    update: (key, obj, rev) => s.update(key, inKubeOrder(types.of(registry(), key, obj), obj), rev),
    delete: (key, rev) => s.delete(key, rev),
    deleteCorrupt: (key) => s.deleteCorrupt(key),
    get: (key, minRev) => s.get(key, minRev),
    getNow: s.getNow,
    list: (prefix, opts) => s.list(prefix, opts),
    watch: (prefix, fromRev, sink) => s.watch(prefix, fromRev, sink),
    currentRev: () => s.currentRev(),
    waitForRev: (rev, ms) => s.waitForRev(rev, ms),
    check: () => s.check(),
    close: () => s.close(),
  };
}
