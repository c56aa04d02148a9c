// apiserver's discovery.StorageVersionHash: the first 8 bytes of the SHA-256 of
// "group/version/kind", base64. The storage version migrator compares these, so
// they must equal kube's for the same stored kind ("/v1/Pod" → "xPOwRZ+Yhw8=").
import { createHash } from 'node:crypto';
import type { ResourceType } from '../registry/types.js';

export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/** The hash of the version a type is stored as (its own, unless it says otherwise). */
export function storageVersionHashOf(t: ResourceType): string {
  const s = t.storageVersion ?? t;
  return storageVersionHash(s.group, s.version, s.kind);
}
