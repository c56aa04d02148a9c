// metadata.managedFields ⇄ owners: one owner per manager identity (manager,
// operation, subresource, and the apiVersion of Update entries, as kube's
// BuildManagerIdentifier). Entries are written in kube's order: Apply before
// Update, then by time, manager, apiVersion, subresource.
import { LRUCache } from 'lru-cache';
import { isPlainObject } from '../api/meta.js';
import { deepFreezeJson } from '../api/json.js';
import { adoptEncoding, equal, fromFieldsV1, FieldsV1Error, isEmpty, toFieldsV1, type FieldSet } from './set.js';

export type Operation = 'Apply' | 'Update';

export interface Owner {
  readonly manager: string;
  readonly operation: Operation;
  readonly apiVersion: string;
  readonly time?: string;
  /** '' for the main resource. */
  readonly subresource: string;
  readonly set: FieldSet;
}

/** Owners by identity. */
export type Owners = Map<string, Owner>;

export function identity(o: Pick<Owner, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify([o.manager, o.operation, o.operation === 'Apply' ? '' : o.apiVersion, o.subresource]);
}

/** `"kubectl"`, `"kubectl-edit" using v1`, `"x" with subresource "status"`: how conflicts name an owner. */
export function describeOwner(o: Owner): string {
  let s = JSON.stringify(o.manager);
  if (o.subresource) s += ` with subresource ${JSON.stringify(o.subresource)}`;
  if (o.operation === 'Update') s += ` using ${o.apiVersion}`;
  return s;
}

/** A list holding exactly one empty entry: the reset request of "Clearing managedFields". */
export function isReset(managedFields: unknown): boolean {
  return Array.isArray(managedFields) && managedFields.length === 1 && isPlainObject(managedFields[0]) && Object.keys(managedFields[0]).length === 0;
}

/** Owners of a managedFields list; undefined when it is not a valid list (kube then keeps the live one). */
export function decodeOwners(managedFields: unknown, scope = ''): Owners | undefined {
  const cached = Array.isArray(managedFields) ? decoded.get(managedFields) : undefined;
  if (cached) return new Map(cached);
  const out = decodeList(managedFields, scope);
  // Stored objects are frozen: a list read again (another write over the same stored object) is decoded once.
  if (out && Array.isArray(managedFields) && Object.isFrozen(managedFields)) decoded.set(managedFields, new Map(out));
  return out;
}

function decodeList(managedFields: unknown, scope: string): Owners | undefined {
  const out: Owners = new Map();
  if (managedFields === undefined || managedFields === null) return out;
  if (!Array.isArray(managedFields)) return undefined;
  try {
    for (const e of managedFields) {
      if (!isPlainObject(e)) return undefined;
      const { manager = '', operation, apiVersion = '', time, fieldsType, fieldsV1, subresource = '' } = e;
      if (typeof manager !== 'string' || typeof apiVersion !== 'string' || typeof subresource !== 'string') return undefined;
      if (operation !== 'Apply' && operation !== 'Update') return undefined;
      if (fieldsType !== 'FieldsV1') return undefined;
      if (time !== undefined && time !== null && typeof time !== 'string') return undefined;
      const set =
        fieldsV1 === undefined || fieldsV1 === null
          ? { member: false }
          : fromFieldsV1(fieldsV1, 0, hints.get(hintKey(scope, manager, operation, apiVersion, subresource)));
      if (canonical.has(fieldsV1 as object)) adoptEncoding(set, fieldsV1 as Record<string, unknown>);
      const o: Owner = { manager, operation, apiVersion, subresource, set, ...(typeof time === 'string' ? { time } : {}) };
      const id = identity(o);
      if (out.has(id)) return undefined;
      out.set(id, o);
    }
  } catch (err) {
    if (err instanceof FieldsV1Error) return undefined;
    throw err;
  }
  return out;
}

const byKubeOrder = (a: Owner, b: Owner): number =>
  a.operation !== b.operation
    ? a.operation < b.operation
      ? -1
      : 1
    : (a.time ?? '') !== (b.time ?? '')
      ? (a.time ?? '') < (b.time ?? '')
        ? -1
        : 1
      : a.manager !== b.manager
        ? a.manager < b.manager
          ? -1
          : 1
        : a.apiVersion !== b.apiVersion
          ? a.apiVersion < b.apiVersion
            ? -1
            : 1
          : a.subresource < b.subresource
            ? -1
            : a.subresource > b.subresource
              ? 1
              : 0;

/** One managedFields entry, members in kube's order. */
export function entryOf(o: Omit<Owner, 'set'>, fieldsV1: Record<string, unknown>): Record<string, unknown> {
  // Members in kube's order, the optional ones only when set: no object literal spread per entry of every write.
  // One literal with the usual members: V8 keeps a literal's members in the object and puts members added
  // later in a property array (~40 B per entry a stored object keeps; docs/decisions/2026-11-30-heap-per-object.md).
  const entry: Record<string, unknown> = o.time
    ? { manager: o.manager, operation: o.operation, apiVersion: o.apiVersion, time: o.time, fieldsType: 'FieldsV1', fieldsV1 }
    : { manager: o.manager, operation: o.operation, apiVersion: o.apiVersion, fieldsType: 'FieldsV1', fieldsV1 };
  if (o.subresource) entry['subresource'] = o.subresource;
  return entry;
}

/** The managedFields list of owners (owners of nothing left out); undefined when none is left. */
export function encodeOwners(owners: Owners, scope = ''): Record<string, unknown>[] | undefined {
  const list = [...owners.values()].filter((o) => !isEmpty(o.set)).sort(byKubeOrder);
  if (list.length === 0) return undefined;
  const encoded = list.map((o) => entryOf(o, toFieldsV1(o.set)));
  // Frozen, the list is stored as it is (stores share frozen parts), so the next write over it finds it here.
  deepFreezeJson(encoded);
  decoded.set(encoded, new Map(list.map((o) => [identity(o), o])));
  for (const o of list) {
    const k = hintKey(scope, o.manager, o.operation, o.apiVersion, o.subresource);
    hints.set(k, o.set);
  }
  return encoded;
}

/**
 * The set each owner of an object (scope: its uid) had at the last write this
 * process encoded. Stores keep JSON copies, so the next write's list is a new
 * one: parsing it against the hint returns the very same set (subtrees shared,
 * FieldsV1 encodings cached) when it still matches. Only a hint: a stale or
 * foreign one merely costs the parse its sharing.
 */
const MAX_HINTS = 4096;
const hints = new LRUCache<string, FieldSet>({ max: MAX_HINTS });

function hintKey(scope: string, manager: string, operation: string, apiVersion: string, subresource: string): string {
  return `${scope}\0${manager}\0${operation}\0${apiVersion}\0${subresource}`;
}

/**
 * Owners of lists this process encoded: the store hands back the stored
 * object, so the next write over it skips parsing FieldsV1. Keyed by the
 * list itself (read-only once stored), so a changed list is never mistaken.
 */
const decoded = new WeakMap<object, Owners>();

/**
 * FieldsV1 written in toFieldsV1's form without a set (trackCreate's): the
 * set parsed from one adopts it as its encoding, so the object's first update
 * re-encodes only what it changes, as after an encodeOwners.
 */
const canonical = new WeakSet<object>();

export function noteCanonical(fieldsV1: object): void {
  canonical.add(fieldsV1);
}

/** Same owners owning the same fields (times aside): such a write changes no ownership. */
export function sameOwnership(a: Owners, b: Owners): boolean {
  const live = (m: Owners) => [...m].filter(([, o]) => !isEmpty(o.set));
  const la = live(a);
  if (la.length !== live(b).length) return false;
  return la.every(([id, o]) => {
    const x = b.get(id);
    return x !== undefined && !isEmpty(x.set) && equal(o.set, x.set) && o.apiVersion === x.apiVersion;
  });
}
