// The write checks shared by every store, so each reports the same codes and messages.
import type { KObject } from '../../../lib/api/meta.js';
import { StoreError } from './types.js';

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
