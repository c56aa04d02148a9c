// Shared bits of the garbage-collection and deletion tests: objects with
// owner references, and polling until the collector has acted.
import type { HttpsClient } from '../helpers/client.js';

export const CM = (ns = 'default') => `/api/v1/namespaces/${ns}/configmaps`;
export const SECRETS = (ns = 'default') => `/api/v1/namespaces/${ns}/secrets`;

export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
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
