// Deletion propagation as the registry applies it (kube's
// deletionFinalizersForGarbageCollection): which GC finalizers a delete
// puts on an object, and each type's default policy. Shared by the delete
// handler (which sets the finalizers) and the garbage collector (which acts
// on them).
import type { KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { PropagationPolicy } from '../handlers/params.js';

/** Dependents lose their reference to the owner before it goes. */
export const ORPHAN_FINALIZER = 'orphan';
/** Dependents are deleted (blocking ones awaited) before the owner goes. */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

export interface PropagationOptions {
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
}

/**
 * A type's policy when the client names none: Background, except batch/v1
 * Jobs, which kube keeps orphaning for compatibility (their pods stay).
 */
export function defaultPolicy(t: ResourceType): PropagationPolicy {
  return t.group === 'batch' && t.plural === 'jobs' ? 'Orphan' : 'Background';
}

/** shouldOrphanDependents: an explicit option wins, then a finalizer already set, then the type's default. */
function shouldOrphan(t: ResourceType, obj: KObject, o: PropagationOptions): boolean {
  if (o.orphanDependents !== undefined) return o.orphanDependents;
  if (o.propagationPolicy !== undefined) return o.propagationPolicy === 'Orphan';
  for (const f of obj.metadata.finalizers ?? []) {
    if (f === ORPHAN_FINALIZER) return true;
    if (f === FOREGROUND_FINALIZER) return false;
  }
  return defaultPolicy(t) === 'Orphan';
}

/** shouldDeleteDependents: only Foreground, asked for now or already set. */
function shouldForeground(obj: KObject, o: PropagationOptions): boolean {
  if (o.orphanDependents !== undefined) return false;
  if (o.propagationPolicy !== undefined) return o.propagationPolicy === 'Foreground';
  for (const f of obj.metadata.finalizers ?? []) {
    if (f === FOREGROUND_FINALIZER) return true;
    if (f === ORPHAN_FINALIZER) return false;
  }
  return false;
}

/** The object's finalizers after a delete with these options; the same array when nothing changes. */
export function finalizersForDelete(t: ResourceType, obj: KObject, o: PropagationOptions): string[] {
  const old = obj.metadata.finalizers ?? [];
  const next = old.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  if (shouldOrphan(t, obj, o)) next.push(ORPHAN_FINALIZER);
  if (shouldForeground(obj, o)) next.push(FOREGROUND_FINALIZER);
  const same = next.length === old.length && next.every((f) => old.includes(f));
  return same ? old : next;
}
