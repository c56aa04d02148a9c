// JSON Patch (RFC 6902) through fast-json-patch, one operation at a time so
// that the bounds hold: at most MAX_OPERATIONS operations, and `copy` may not
// grow the document past a byte budget (a few copies of a list into itself
// would otherwise double it each time). Never mutates its inputs.
import jsonpatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { isPlainObject } from '../api/meta.js';
import { PatchError } from './errors.js';

/** kube-apiserver's limit on the operations of one JSON patch. */
export const MAX_OPERATIONS = 10_000;

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Checks the shape of a JSON patch document; throws PatchError('malformed'). */
export function parseJsonPatch(doc: unknown): Operation[] {
  if (!Array.isArray(doc)) throw new PatchError('malformed', 'a JSON patch must be an array of operations');
  if (doc.length > MAX_OPERATIONS) throw new PatchError('too-large', `the allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${doc.length}`);
  doc.forEach((op, i) => {
    if (!isPlainObject(op)) throw new PatchError('malformed', `operation ${i}: must be an object`);
    if (typeof op['op'] !== 'string' || !OPS.has(op['op'])) throw new PatchError('malformed', `operation ${i}: unknown op ${JSON.stringify(op['op'] ?? null)}`);
    if (typeof op['path'] !== 'string') throw new PatchError('malformed', `operation ${i}: missing path`);
    if ((op['op'] === 'move' || op['op'] === 'copy') && typeof op['from'] !== 'string') throw new PatchError('malformed', `operation ${i}: missing from`);
    if ((op['op'] === 'add' || op['op'] === 'replace' || op['op'] === 'test') && !('value' in op)) throw new PatchError('malformed', `operation ${i}: missing value`);
  });
  return doc as Operation[];
}

/**
 * Applies `ops` to a copy of `doc`. A failed `test`, a missing path or an
 * out-of-range index throws PatchError('failed'); growth past `copyBudget`
 * bytes through `copy` throws PatchError('too-large').
 */
export function applyJsonPatch(doc: unknown, ops: readonly Operation[], copyBudget: number): unknown {
  let current: unknown = structuredClone(doc);
  let copied = 0;
  for (const [i, raw] of ops.entries()) {
    const op = structuredClone(raw);
    if (op.op === 'copy') {
      let value: unknown;
      try { value = jsonpatch.getValueByPointer(current, op.from); } catch { value = undefined; }
      copied += value === undefined ? 0 : JSON.stringify(value).length;
      if (copied > copyBudget) throw new PatchError('too-large', `the copies of this JSON patch exceed ${copyBudget} bytes`);
    }
    try {
      current = jsonpatch.applyOperation(current, op, true, true, true, i).newDocument;
    } catch (err) {
      if (err instanceof jsonpatch.JsonPatchError) {
        const code = err.name === 'TEST_OPERATION_FAILED' ? 'failed' : /^OPERATION_(PATH_UNRESOLVABLE|VALUE_OUT_OF_BOUNDS|PATH_ILLEGAL_ARRAY_INDEX|FROM_UNRESOLVABLE|PATH_CANNOT_ADD)$/.test(err.name) ? 'failed' : 'malformed';
        throw new PatchError(code, describe(err.name, op));
      }
      if (err instanceof TypeError) throw new PatchError('malformed', `operation ${i}: ${err.message}`);
      throw err;
    }
  }
  return current;
}

function describe(name: string, op: Operation): string {
  switch (name) {
    case 'TEST_OPERATION_FAILED': return `testing value ${op.path} failed: test failed`;
    case 'OPERATION_PATH_UNRESOLVABLE': return `${op.op} operation does not apply: doc is missing path: "${op.path}"`;
    case 'OPERATION_FROM_UNRESOLVABLE': return `${op.op} operation does not apply: doc is missing from path: "${'from' in op ? op.from : ''}"`;
    case 'OPERATION_VALUE_OUT_OF_BOUNDS': return `${op.op} operation does not apply: index out of bounds in path "${op.path}"`;
    case 'OPERATION_PATH_ILLEGAL_ARRAY_INDEX': return `${op.op} operation does not apply: invalid array index in path "${op.path}"`;
    case 'OPERATION_PATH_CANNOT_ADD': return `${op.op} operation does not apply: doc is missing path: "${op.path}"`;
    default: return `${op.op} operation on "${op.path}" is invalid: ${name.toLowerCase().replace(/_/g, ' ')}`;
  }
}
