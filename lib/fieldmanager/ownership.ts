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
import { ConversionFailure, type Versions } from './versions.js';

export type Obj = Record<string, unknown>;
export type OwnerId = Omit<Owner, 'set' | 'time'>;

/** The fields no manager owns (kube's stripMeta): these at the root, and these in metadata. */
export const SERVER_ROOT_FIELDS: readonly string[] = ['apiVersion', 'kind', 'metadata'];
export const SERVER_META_FIELDS: readonly string[] = [
  'name',
  'namespace',
  'creationTimestamp',
  'selfLink',
  'uid',
  'clusterName',
  'generation',
  'managedFields',
  'resourceVersion',
];
const SERVER_PATHS: readonly (readonly string[])[] = [...SERVER_ROOT_FIELDS.map((f) => [`f:${f}`]), ...SERVER_META_FIELDS.map((f) => ['f:metadata', `f:${f}`])];

const SERVER_SET: FieldSet = (() => {
  const b: Builder = { member: false };
  for (const p of SERVER_PATHS) insert(b, p);
  return freeze(b);
})();

export function stripServerPaths(s: FieldSet): FieldSet {
  return difference(s, SERVER_SET);
}

export function stripComparison(c: Comparison): Comparison {
  return { added: stripServerPaths(c.added), modified: stripServerPaths(c.modified), removed: stripServerPaths(c.removed) };
}

export interface Conflict {
  readonly owner: Owner;
  readonly path: readonly string[];
}

export class ConflictError extends Error {
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`${conflicts.length} conflicts`);
    this.name = 'ConflictError';
  }
}

/** The objects a write compares, for owners recorded in another version than the request's. */
interface Across {
  readonly live: Obj;
  readonly next: Obj;
  readonly versions: Versions;
}

/** A conversion inside the algorithm, failing with kube's words for the step (`failed to convert new object: …`). */
function convertAt(v: Versions, obj: Obj, apiVersion: string, step: string): Obj {
  try {
    return v.convert(obj, apiVersion);
  } catch (err) {
    if (err instanceof ConversionFailure) throw new ConversionFailure(err.cause, `${step}: ${err.message}`);
    throw err;
  }
}

/**
 * kube's reconcileManagedFieldsWithSchemaChanges converts the live object to
 * every owner's version before anything else: a version the kind no longer has,
 * or a converter that fails, fails the write with the converter's error as it is.
 */
function reconcile(owners: Owners, live: Obj, v: Versions | undefined): void {
  if (!v) return;
  for (const o of owners.values()) if (o.apiVersion !== v.current) v.convert(live, o.apiVersion);
}

interface Changes {
  readonly changed: FieldSet;
  readonly removed: FieldSet;
}

/**
 * Other owners lose the fields `cmp` changed (conflicts when not forced) and
 * the fields it removed; owners left with nothing are dropped. An owner in
 * another version is compared in its version: the live and the new object are
 * converted to it (once per version), as structured-merge-diff's update does.
 */
function settle(owners: Owners, workflow: string, cmp: Comparison, force: boolean, across?: Across): Owners {
  const here: Changes = { changed: union(cmp.modified, cmp.added), removed: cmp.removed };
  const byVersion = new Map<string, Changes>();
  const changesFor = (o: Owner): Changes => {
    if (!across || o.apiVersion === across.versions.current) return here;
    let c = byVersion.get(o.apiVersion);
    if (!c) {
      const v = across.versions;
      const old = convertAt(v, across.live, o.apiVersion, 'failed to convert old object');
      const next = convertAt(v, across.next, o.apiVersion, 'failed to convert new object');
      const vc = stripComparison(compare(old, next, v.node(o.apiVersion)));
      c = { changed: union(vc.modified, vc.added), removed: vc.removed };
      byVersion.set(o.apiVersion, c);
    }
    return c;
  };
  const conflicts: Conflict[] = [];
  const out: Owners = new Map();
  for (const [id, o] of owners) {
    if (id === workflow) {
      out.set(id, o);
      continue;
    }
    const { changed, removed } = changesFor(o);
    const taken = intersection(o.set, changed);
    if (!force && !isEmpty(taken)) for (const path of members(taken)) conflicts.push({ owner: o, path });
    const set = difference(difference(o.set, taken), removed);
    if (!isEmpty(set)) out.set(id, set === o.set ? o : { ...o, set });
  }
  if (!force && conflicts.length > 0) throw new ConflictError(conflicts);
  return out;
}

export interface UpdateResult {
  readonly owners: Owners;
  readonly same: boolean;
}

/** A non-apply write by `who` from `live` to `next` (both without managedFields): it owns what it changed. */
export function updateOwnership(live: Obj, next: Obj, node: Node | undefined, owners: Owners, who: OwnerId, time: string, versions?: Versions): UpdateResult {
  reconcile(owners, live, versions);
  const cmp = stripComparison(compare(live, next, node));
  if (isSame(cmp)) return { owners, same: true };
  const self = identity(who);
  const out = settle(owners, '', cmp, true, versions && { live, next, versions });
  const kept = out.get(self)?.set ?? EMPTY;
  // Sharing with the owner's set before the write keeps an unchanged set the very same one.
  const set = share(union(kept, difference(union(cmp.modified, cmp.added), cmp.removed)), owners.get(self)?.set);
  out.delete(self);
  if (!isEmpty(set)) out.set(self, ownerOf(who, time, set));
  return { owners: out, same: false };
}

/**
 * `who`'s owner entry with its time and set, as `{ ...who, time, set }` has it, built as one literal: on
 * Node 20's V8 a spread given members it lacked makes a hidden class per entry, and each later read of
 * the entry misses V8's caches (lib/api/own.ts, copyOwn; docs/decisions/2026-11-30-create-cpu-cuts-4.md).
 */
function ownerOf(who: OwnerId, time: string, set: FieldSet): Owner {
  return { manager: who.manager, operation: who.operation, apiVersion: who.apiVersion, subresource: who.subresource, time, set };
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
  /** The kind's versions, when owners may be recorded in another version than the applier's. */
  readonly versions?: Versions;
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
    owners = updateOwnership(
      emptyObjectOf(a.node),
      live,
      a.node,
      owners,
      { manager: 'before-first-apply', operation: 'Update', apiVersion: a.applier.apiVersion, subresource: a.applier.subresource },
      a.time,
    ).owners;
  }
  reconcile(owners, live, a.versions);
  const self = identity(a.applier);
  const lastOwner = owners.get(self);
  const last = lastOwner?.set;
  const set = share(stripServerPaths(toFieldSet(a.intent, a.node)), last);
  const withIntent: Owners = new Map(owners);
  withIntent.set(self, ownerOf(a.applier, a.time, set));
  let object = merge(live, a.intent, a.node) as Obj;
  if (lastOwner && a.versions && lastOwner.apiVersion !== a.versions.current) {
    if (!isEmpty(lastOwner.set)) object = pruneAcross(object, withIntent, lastOwner, a.versions);
  } else if (last && !isEmpty(difference(last, set))) {
    // Pruning only matters when the applier dropped something it owned before.
    object = prune(object, withIntent, last, a.node);
  }
  const cmp = stripComparison(compare(live, object, a.node));
  const settled = settle(withIntent, self, cmp, a.force, a.versions && { live, next: object, versions: a.versions });
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

/**
 * prune when the applier's previous apply was made through another version
 * (kube's Updater.prune with its converter): the merged object is pruned in the
 * last applied version, owned items are added back in each owner's version
 * (that version first), dangling ones in the last applied version, and the
 * result converted back to the request's version.
 */
function pruneAcross(merged: Obj, owners: Owners, lastOwner: Owner, v: Versions): Obj {
  const step = 'failed to prune fields';
  const lastVersion = lastOwner.apiVersion;
  const nodeL = v.node(lastVersion);
  const mergedL = convertAt(v, merged, lastVersion, `${step}: failed to convert merged object to last applied version`);
  const lastSet = ensureNamedFieldsAreMembers(lastOwner.set, nodeL);
  let pruned = removeItems(mergedL, lastSet, nodeL) as Obj;
  const managedAt = new Map<string, FieldSet>();
  for (const o of owners.values()) managedAt.set(o.apiVersion, union(managedAt.get(o.apiVersion) ?? EMPTY, o.set));
  // The pruned version first, so fields a conversion needs are back before converting.
  const order = [...managedAt.keys()].sort((a, b) => (a === lastVersion ? -1 : b === lastVersion ? 1 : 0));
  let cur = mergedL;
  for (const version of order) {
    const node = v.node(version);
    const named = (s: FieldSet) => ensureNamedFieldsAreMembers(s, node);
    cur = convertAt(v, cur, version, `${step}: failed add back owned items: failed to convert merged object at version ${version}`);
    const p = convertAt(v, pruned, version, `${step}: failed add back owned items: failed to convert pruned object at version ${version}`);
    const keep = union(named(toFieldSet(p, node)), named(managedAt.get(version)!));
    pruned = removeItems(cur, difference(named(toFieldSet(cur, node)), keep), node) as Obj;
  }
  const prunedL = convertAt(v, pruned, lastVersion, `${step}: failed add back dangling items: failed to convert pruned object to last applied version`);
  const mergedSet = ensureNamedFieldsAreMembers(toFieldSet(mergedL, nodeL), nodeL);
  const dangling = intersection(difference(mergedSet, ensureNamedFieldsAreMembers(toFieldSet(prunedL, nodeL), nodeL)), lastSet);
  return convertAt(v, removeItems(mergedL, dangling, nodeL) as Obj, v.current, step);
}
