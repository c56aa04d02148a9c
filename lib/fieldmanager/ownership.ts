// Ownership bookkeeping of structured-merge-diff's Updater: an update takes
// the fields it changed from every other owner; an apply merges the intent,
// prunes what the applier dropped, and fails on fields other owners hold
// with another value unless forced.
import type { Node } from '../schema/model.js';
import { emptyObjectOf } from './baseline.js';
import { compare, isSame, type Comparison } from './compare.js';
import { identity, type Owner, type Owners } from './managers.js';
import { merge, removeItems } from './merge.js';
import { difference, freeze, insert, intersection, isEmpty, members, share, union, EMPTY, type Builder, type FieldSet } from './set.js';
import { ensureNamedFieldsAreMembers, toFieldSet } from './tofieldset.js';

export type Obj = Record<string, unknown>;
export type OwnerId = Omit<Owner, 'set' | 'time'>;

/** The fields no manager owns (kube's stripMeta): these at the root, and these in metadata. */
export const SERVER_ROOT_FIELDS: readonly string[] = ['apiVersion', 'kind', 'metadata'];
export const SERVER_META_FIELDS: readonly string[] = ['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'];
const SERVER_PATHS: readonly (readonly string[])[] = [
  ...SERVER_ROOT_FIELDS.map((f) => [`f:${f}`]), ...SERVER_META_FIELDS.map((f) => ['f:metadata', `f:${f}`]),
];

const SERVER_SET: FieldSet = (() => { const b: Builder = { member: false }; for (const p of SERVER_PATHS) insert(b, p); return freeze(b); })();

export function stripServerPaths(s: FieldSet): FieldSet {
  return difference(s, SERVER_SET);
}

export function stripComparison(c: Comparison): Comparison {
  return { added: stripServerPaths(c.added), modified: stripServerPaths(c.modified), removed: stripServerPaths(c.removed) };
}

export interface Conflict { readonly owner: Owner; readonly path: readonly string[] }

export class ConflictError extends Error {
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`${conflicts.length} conflicts`);
    this.name = 'ConflictError';
  }
}

/**
 * Other owners lose the fields `cmp` changed (conflicts when not forced) and
 * the fields it removed; owners left with nothing are dropped.
 */
function settle(owners: Owners, workflow: string, cmp: Comparison, force: boolean): Owners {
  const changed = union(cmp.modified, cmp.added);
  const conflicts: Conflict[] = [];
  const out: Owners = new Map();
  for (const [id, o] of owners) {
    if (id === workflow) { out.set(id, o); continue; }
    const taken = intersection(o.set, changed);
    if (!force && !isEmpty(taken)) for (const path of members(taken)) conflicts.push({ owner: o, path });
    const set = difference(difference(o.set, taken), cmp.removed);
    if (!isEmpty(set)) out.set(id, set === o.set ? o : { ...o, set });
  }
  if (!force && conflicts.length > 0) throw new ConflictError(conflicts);
  return out;
}

export interface UpdateResult { readonly owners: Owners; readonly same: boolean }

/** A non-apply write by `who` from `live` to `next` (both without managedFields): it owns what it changed. */
export function updateOwnership(live: Obj, next: Obj, node: Node | undefined, owners: Owners, who: OwnerId, time: string): UpdateResult {
  const cmp = stripComparison(compare(live, next, node));
  if (isSame(cmp)) return { owners, same: true };
  const self = identity(who);
  const out = settle(owners, '', cmp, true);
  const kept = out.get(self)?.set ?? EMPTY;
  // Sharing with the owner's set before the write keeps an unchanged set the very same one.
  const set = share(union(kept, difference(union(cmp.modified, cmp.added), cmp.removed)), owners.get(self)?.set);
  out.delete(self);
  if (!isEmpty(set)) out.set(self, { ...who, time, set });
  return { owners: out, same: false };
}

export interface ApplyInput {
  /** The live object without managedFields; undefined = the apply creates it. */
  readonly live: Obj | undefined;
  readonly intent: Obj;
  readonly node: Node | undefined;
  readonly owners: Owners;
  readonly applier: OwnerId;
  readonly force: boolean;
  readonly time: string;
}

export interface ApplyResult {
  readonly object: Obj;
  readonly owners: Owners;
  /** The object is unchanged (ownership may still have changed). */
  readonly same: boolean;
}

export function applyOwnership(a: ApplyInput): ApplyResult {
  const live = a.live ?? {};
  let owners = a.owners;
  if (a.live && owners.size === 0) {
    // An object nobody owns yet: what it holds belongs to "before-first-apply" (kube's skip-non-applied manager).
    owners = updateOwnership(emptyObjectOf(a.node), live, a.node, owners, { manager: 'before-first-apply', operation: 'Update', apiVersion: a.applier.apiVersion, subresource: a.applier.subresource }, a.time).owners;
  }
  const self = identity(a.applier);
  const last = owners.get(self)?.set;
  const set = share(stripServerPaths(toFieldSet(a.intent, a.node)), last);
  const withIntent: Owners = new Map(owners);
  withIntent.set(self, { ...a.applier, time: a.time, set });
  let object = merge(live, a.intent, a.node) as Obj;
  // Pruning only matters when the applier dropped something it owned before.
  if (last && !isEmpty(difference(last, set))) object = prune(object, withIntent, last, a.node);
  const cmp = stripComparison(compare(live, object, a.node));
  const settled = settle(withIntent, self, cmp, a.force);
  return { object, owners: settled, same: isSame(cmp) };
}

/** Removes what the applier owned before and dropped now, unless someone else owns it (kube's Updater.prune). */
function prune(merged: Obj, owners: Owners, lastSet: FieldSet, node: Node | undefined): Obj {
  const named = (s: FieldSet) => ensureNamedFieldsAreMembers(s, node);
  const last = named(lastSet);
  const pruned = removeItems(merged, last, node);
  let managed: FieldSet = EMPTY;
  for (const o of owners.values()) managed = union(managed, o.set);
  const mergedSet = named(toFieldSet(merged, node));
  const prunedSet = named(toFieldSet(pruned, node));
  const ownedBack = removeItems(merged, difference(mergedSet, union(prunedSet, named(managed))), node);
  const removed = difference(mergedSet, named(toFieldSet(ownedBack, node)));
  return removeItems(merged, intersection(removed, last), node) as Obj;
}
