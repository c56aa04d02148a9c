// What the certificate controllers (csrsigning, csrapproving, csrcleaner) share:
// the CertificateSigningRequest type of the registry, its list, and the one
// status write they make, through the type's own /status or /approval rules.
import type { KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { prepareUpdate, type UpdateTarget } from '../objects.js';
import { guaranteedUpdate } from '../store/types.js';

export function csrType(env: CoreEnv): ResourceType {
  const t = env.registry.lookup('certificates.k8s.io', 'v1', 'certificatesigningrequests');
  if (!t) throw new Error('the registry has no certificates.k8s.io/v1 certificatesigningrequests type');
  return t;
}

export function csrPrefix(env: CoreEnv): string {
  return listPrefix(csrType(env), '');
}

export async function listCsrs(env: CoreEnv): Promise<KObject[]> {
  return (await env.store.list(csrPrefix(env))).items;
}

/**
 * Writes `status` (from the stored status) of the request `uid` names, through
 * `target`'s rules (validation included); skipped when the object is gone,
 * replaced, or `still` no longer holds for it.
 */
export async function writeCsrStatus(
  env: CoreEnv,
  csr: KObject,
  target: UpdateTarget,
  still: (cur: KObject) => boolean,
  status: (cur: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  const t = csrType(env);
  await guaranteedUpdate(env.store, objectKey(t, '', csr.metadata.name ?? ''), (cur) => {
    if (cur.metadata.uid !== csr.metadata.uid || !still(cur)) return null;
    const before = (cur['status'] ?? {}) as Record<string, unknown>;
    const next = { ...structuredClone(cur), status: status(structuredClone(before)) };
    return prepareUpdate(t, next, cur, target, undefined, env.clock()) ?? null;
  });
}
