// A controller's status write as kube's controllers make it: a server-side
// apply of the status it wants, on the status subresource, under its own
// field manager; the result prepared as any status update (the managed
// fields the apply computed kept).
import type { KObject } from '../../../lib/api/meta.js';
import { applyIntent } from '../../../lib/fieldmanager/index.js';
import { apiVersionOf, type ResourceType } from '../../../lib/registry/types.js';
import { prepareUpdate } from '../objects.js';

/** The object to store, or undefined when the apply changes nothing (prepareUpdate's answer). */
export function applyStatus(t: ResourceType, cur: KObject, status: Record<string, unknown>, manager: string, now: number): KObject | undefined {
  const name = cur.metadata.name ?? '';
  const namespace = cur.metadata.namespace;
  const intent = { apiVersion: apiVersionOf(t), kind: t.kind, metadata: { name, ...(namespace ? { namespace } : {}) }, status };
  const merged = applyIntent(cur, intent, true, { manager, apiVersion: apiVersionOf(t), subresource: 'status', now, node: t.schema }).object;
  const managedFields = merged.metadata.managedFields;
  return prepareUpdate(t, merged, cur, 'status', (n) => {
    n.metadata.managedFields = managedFields;
  });
}
