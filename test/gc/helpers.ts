// Shared bits of the garbage-collection and deletion tests: objects with
// owner references, and polling until the collector has acted.
import type { HttpsClient } from '../helpers/client.js';
import { eventually, type Probe } from '../helpers/eventually.js';

export const CM = (ns = 'default') => `/api/v1/namespaces/${ns}/configmaps`;
export const SECRETS = (ns = 'default') => `/api/v1/namespaces/${ns}/secrets`;

/** test/helpers/eventually.ts with these tests' bound (the collector acts within a few passes). */
export function until<T>(what: string, probe: Probe<T>, timeoutMs = 8000): Promise<T> {
  return eventually(what, probe, { timeoutMs });
}

export interface Made {
  name: string;
  uid: string;
  path: string;
}

/** Creates a ConfigMap, optionally owned by `owners` (ConfigMaps in the same namespace). */
export async function configMap(c: HttpsClient, name: string, owners: Made[] = [], block = false, ns = 'default'): Promise<Made> {
  const ownerReferences = owners.map((o) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: o.name,
    uid: o.uid,
    ...(block ? { blockOwnerDeletion: true } : {}),
  }));
  const r = await c.request('POST', CM(ns), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...(ownerReferences.length ? { ownerReferences } : {}) },
  });
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
  return { name, uid: r.json.metadata.uid, path: `${CM(ns)}/${name}` };
}

export async function gone(c: HttpsClient, path: string): Promise<true | undefined> {
  return (await c.request('GET', path)).status === 404 ? true : undefined;
}
