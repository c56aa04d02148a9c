// The write checks shared by every store, so each reports the same codes and messages.
import type { KObject } from '../../../lib/api/meta.js';
import { StoreError } from './types.js';
import { encodeEnvelope, hasSchema } from '../../../lib/protobuf/codec.js';

export type WriteKind = 'create' | 'update' | 'delete';

/** Throws the StoreError a write must fail with, given the newest state of its key. */
export function checkWrite(kind: WriteKind, key: string, current: KObject | undefined, expectedRev?: number): void {
  if (kind === 'create') {
    if (current) throw new StoreError('exists', `key "${key}" already exists`);
    return;
  }
  if (!current) throw new StoreError('not-found', `key "${key}" not found`);
  if (expectedRev === undefined) return;
  const rev = Number(current.metadata.resourceVersion);
  if (rev !== expectedRev) {
    throw new StoreError('conflict', `key "${key}" was modified: expected revision ${expectedRev}, current ${rev}`, rev);
  }
}

/**
 * etcd's default --max-request-bytes (1.5 MiB): kube-apiserver's write of a
 * bigger object fails there, whatever its request body (up to 3 MiB) was.
 * kube stores built-in kinds as protobuf and custom resources as JSON, so that
 * is the form measured (the key and etcd's request framing, some 100 bytes, are not).
 */
export const MAX_STORED_BYTES = 1572864;

/**
 * Throws `entity-too-large` with etcd's words when `object`'s stored form in
 * kube is over MAX_STORED_BYTES; `json` is its JSON, which every store writes.
 */
export function checkStoredSize(json: string, object: KObject): void {
  // UTF-8 is at most 3 bytes per UTF-16 unit: a shorter text is under the bound without counting its bytes.
  if (json.length * 3 <= MAX_STORED_BYTES) return;
  if (json.length <= MAX_STORED_BYTES && Buffer.byteLength(json) <= MAX_STORED_BYTES) return;
  // Only an object this large pays for its protobuf form (remembered for protobuf answers).
  if (hasSchema(String(object.apiVersion), String(object.kind))) {
    try {
      if (encodeEnvelope(object).length <= MAX_STORED_BYTES) return;
    } catch {
      // Not encodable: its JSON size decides.
    }
  }
  throw new StoreError('entity-too-large', 'etcdserver: request is too large');
}
