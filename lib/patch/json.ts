// JSON Patch (RFC 6902), one operation at a time so that the bounds hold: at
// most MAX_OPERATIONS operations, and `copy` may not grow the document past a
// byte budget (a few copies of a list into itself would otherwise double it
// each time). Never mutates its inputs.
//
// Written here rather than taken from fast-json-patch: that library walks a
// pointer with `obj[token]`, so `/metadata/labels/constructor/x` reached the
// global Object constructor, and it refuses `__proto__` outright where
// kube-apiserver treats it as an ordinary key (then refused by validation
// with the field's own message). Pointers here walk own properties only.
import { isPlainObject } from '../api/meta.js';
import { cloneJson, jsonEqual } from '../api/json.js';
import { hasOwn, setOwn } from '../api/own.js';
import { PatchError } from './errors.js';

/** kube-apiserver's limit on the operations of one JSON patch. */
export const MAX_OPERATIONS = 10_000;

export type Operation =
  { op: 'add' | 'replace' | 'test'; path: string; value: unknown } | { op: 'remove'; path: string } | { op: 'move' | 'copy'; from: string; path: string };

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Checks the shape of a JSON patch document; throws PatchError('malformed'). */
export function parseJsonPatch(doc: unknown): Operation[] {
  if (!Array.isArray(doc)) throw new PatchError('malformed', 'a JSON patch must be an array of operations');
  if (doc.length > MAX_OPERATIONS) throw new PatchError('too-large', `the allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${doc.length}`);
  return doc.map((op, i) => {
    if (!isPlainObject(op)) throw new PatchError('malformed', `operation ${i}: must be an object`);
    const name = hasOwn(op, 'op') ? op['op'] : undefined;
    if (typeof name !== 'string' || !OPS.has(name)) throw new PatchError('malformed', `operation ${i}: unknown op ${JSON.stringify(name ?? null)}`);
    const path = hasOwn(op, 'path') ? op['path'] : undefined;
    if (typeof path !== 'string') throw new PatchError('malformed', `operation ${i}: missing path`);
    pointer(path, i);
    if (name === 'move' || name === 'copy') {
      const from = hasOwn(op, 'from') ? op['from'] : undefined;
      if (typeof from !== 'string') throw new PatchError('malformed', `operation ${i}: missing from`);
      pointer(from, i);
      return { op: name, from, path };
    }
    if (name === 'remove') return { op: name, path };
    if (!hasOwn(op, 'value')) throw new PatchError('malformed', `operation ${i}: missing value`);
    return { op: name as 'add' | 'replace' | 'test', path, value: op['value'] };
  });
}

/** The reference tokens of a JSON pointer (RFC 6901): `~1` is `/`, then `~0` is `~`. */
function pointer(path: string, i: number): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError('malformed', `operation ${i}: path ${JSON.stringify(path)} must start with "/"`);
  return path
    .slice(1)
    .split('/')
    .map((t) => (t.includes('~') ? t.replace(/~1/g, '/').replace(/~0/g, '~') : t));
}

type Container = Record<string, unknown> | unknown[];

/** An array index token: decimal digits only (no sign, no `-` here). */
const isIndex = (t: string): boolean => /^[0-9]+$/.test(t); // leading zeros allowed, as kube's json-patch reads them

class Failure extends Error {}

/**
 * Applies `ops` to a copy of `doc`. A failed `test`, a missing path or an
 * out-of-range index throws PatchError('failed'); growth past `copyBudget`
 * bytes through `copy` throws PatchError('too-large').
 */
export function applyJsonPatch(doc: unknown, ops: readonly Operation[], copyBudget: number): unknown {
  let current: unknown = cloneJson(doc);
  let copied = 0;
  for (const [i, op] of ops.entries()) {
    try {
      switch (op.op) {
        case 'add':
          current = add(current, pointer(op.path, i), cloneJson(op.value), op);
          break;
        case 'remove':
          current = remove(current, pointer(op.path, i), op).doc;
          break;
        case 'replace':
          current = replace(current, pointer(op.path, i), cloneJson(op.value), op);
          break;
        case 'test':
          if (!jsonEqual(get(current, pointer(op.path, i), op, 'path'), op.value))
            throw new PatchError('failed', `testing value ${op.path} failed: test failed`);
          break;
        case 'move': {
          const from = pointer(op.from, i);
          const to = pointer(op.path, i);
          if (op.from !== op.path && to.length > from.length && from.every((t, j) => to[j] === t)) {
            throw new PatchError('failed', `move operation does not apply: "${op.from}" is an ancestor of "${op.path}"`);
          }
          const taken = remove(current, from, op, 'from');
          current = add(taken.doc, to, taken.value, op);
          break;
        }
        case 'copy': {
          const value = cloneJson(get(current, pointer(op.from, i), op, 'from'));
          copied += JSON.stringify(value)?.length ?? 0;
          if (copied > copyBudget) throw new PatchError('too-large', `the copies of this JSON patch exceed ${copyBudget} bytes`);
          current = add(current, pointer(op.path, i), value, op);
          break;
        }
      }
    } catch (err) {
      if (err instanceof Failure) throw new PatchError('failed', err.message);
      throw err;
    }
  }
  return current;
}

const missing = (op: Operation, which: 'path' | 'from' = 'path'): Failure =>
  new Failure(
    `${op.op} operation does not apply: doc is missing ${which === 'from' ? 'from path' : 'path'}: "${which === 'from' && 'from' in op ? op.from : op.path}"`,
  );

/** The container that holds the last token of `tokens`, walked by own members. */
function parentOf(doc: unknown, tokens: readonly string[], op: Operation, which: 'path' | 'from'): Container {
  let at: unknown = doc;
  for (let j = 0; j < tokens.length - 1; j++) {
    const t = tokens[j]!;
    if (Array.isArray(at)) {
      if (!isIndex(t) || Number(t) >= at.length) throw missing(op, which);
      at = at[Number(t)];
    } else if (isPlainObject(at) && hasOwn(at, t)) {
      at = at[t];
    } else {
      throw missing(op, which);
    }
  }
  if (!Array.isArray(at) && !isPlainObject(at)) throw missing(op, which);
  return at;
}

function get(doc: unknown, tokens: readonly string[], op: Operation, which: 'path' | 'from'): unknown {
  if (tokens.length === 0) return doc;
  const parent = parentOf(doc, tokens, op, which);
  const t = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    if (!isIndex(t) || Number(t) >= parent.length) throw missing(op, which);
    return parent[Number(t)];
  }
  if (!hasOwn(parent, t)) throw missing(op, which);
  return parent[t];
}

function add(doc: unknown, tokens: readonly string[], value: unknown, op: Operation): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens, op, 'path');
  const t = tokens[tokens.length - 1]!;
  if (!Array.isArray(parent)) {
    setOwn(parent, t, value);
    return doc;
  }
  if (t === '-') {
    parent.push(value);
    return doc;
  }
  if (!isIndex(t)) throw new Failure(`${op.op} operation does not apply: invalid array index in path "${op.path}"`);
  if (Number(t) > parent.length) throw new Failure(`${op.op} operation does not apply: index out of bounds in path "${op.path}"`);
  parent.splice(Number(t), 0, value);
  return doc;
}

function remove(doc: unknown, tokens: readonly string[], op: Operation, which: 'path' | 'from' = 'path'): { doc: unknown; value: unknown } {
  const value = get(doc, tokens, op, which);
  if (tokens.length === 0) return { doc: null, value };
  const parent = parentOf(doc, tokens, op, which);
  const t = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) parent.splice(Number(t), 1);
  else delete parent[t];
  return { doc, value };
}

function replace(doc: unknown, tokens: readonly string[], value: unknown, op: Operation): unknown {
  get(doc, tokens, op, 'path');
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens, op, 'path');
  const t = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) parent[Number(t)] = value;
  else setOwn(parent, t, value);
  return doc;
}
