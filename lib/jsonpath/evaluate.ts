// kube's JSONPath evaluation (k8s.io/client-go/util/jsonpath, jsonpath.go,
// with allowMissingKeys as kube's printers set it): a missing field selects
// nothing; an index out of range, a filter over something that is not a
// list, or a comparison of unlike types is an error (the caller's column
// cell is then empty, as kube leaves it nil). Objects are walked by own
// properties only: `__proto__` is a key like any other.
import { isPlainObject } from '../api/meta.js';
import { JsonPathError, type Node, type Path } from './parse.js';

const isObj = (v: unknown): v is Record<string, unknown> => isPlainObject(v);

function field(values: unknown[], name: string): unknown[] {
  if (name === '') return values;
  const out: unknown[] = [];
  for (const v of values) if (isObj(v) && Object.hasOwn(v, name) && v[name] !== undefined) out.push(v[name]);
  return out;
}

function children(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isObj(v)) return Object.keys(v).map((k) => v[k]);
  return [];
}

/** The value itself (when it has children) and every descendant that has, as kube's evalRecursive lists them. */
function recursive(values: unknown[], out: unknown[] = []): unknown[] {
  for (const v of values) {
    const kids = children(v);
    if (kids.length === 0) continue;
    out.push(v);
    recursive(kids, out);
  }
  return out;
}

function array(values: unknown[], n: Extract<Node, { kind: 'array' }>): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (!Array.isArray(v)) throw new JsonPathError(`${typeof v} is not array or slice`);
    const len = v.length;
    let start = n.start ?? 0;
    if (start < 0) start += len;
    let end = n.end ?? len;
    // A single index's derived end (start + 1) of -1 is 0: counted from the end, it is the length.
    if (end < 0 || (end === 0 && n.single)) end += len;
    if (end === start) continue;
    if (start >= len || start < 0) throw new JsonPathError(`array index out of bounds: index ${start}, length ${len}`);
    if (end > len || end < 0) throw new JsonPathError(`array index out of bounds: index ${end - 1}, length ${len}`);
    if (start > end) throw new JsonPathError(`starting index ${start} is greater than ending index ${end}`);
    const step = n.step ?? 1;
    if (n.step !== undefined && step <= 0) throw new JsonPathError('step must be > 0');
    for (let i = start; i < end; i += step) out.push(v[i]);
  }
  return out;
}

/** Go template's comparisons as kube's filters use them: like kinds only. */
function compare(op: string, a: unknown, b: unknown): boolean {
  const kind = (x: unknown) => (typeof x === 'number' ? 'number' : typeof x === 'string' ? 'string' : typeof x === 'boolean' ? 'bool' : 'other');
  const ka = kind(a);
  const kb = kind(b);
  if (ka === 'other' || kb === 'other') throw new JsonPathError('invalid type for comparison');
  if (ka !== kb) throw new JsonPathError('incompatible types for comparison');
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
  }
  if (ka === 'bool') throw new JsonPathError('invalid type for comparison');
  const x = a as number | string;
  const y = b as number | string;
  switch (op) {
    case '<':
      return x < y;
    case '>':
      return x > y;
    case '<=':
      return x <= y;
    case '>=':
      return x >= y;
  }
  throw new JsonPathError(`unrecognized filter operator ${op}`);
}

function filter(values: unknown[], n: Extract<Node, { kind: 'filter' }>): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (!Array.isArray(v)) throw new JsonPathError(`${typeof v} is not array or slice and cannot be filtered`);
    for (const item of v) {
      const lefts = evaluate(n.left, [item]);
      if (n.op === 'exists') {
        if (lefts.length > 0) out.push(item);
        continue;
      }
      if (lefts.length === 0) continue;
      if (lefts.length > 1) throw new JsonPathError('can only compare one element at a time');
      const rights = evaluate(n.right, [item]);
      if (rights.length === 0) continue;
      if (rights.length > 1) throw new JsonPathError('can only compare one element at a time');
      if (compare(n.op, lefts[0], rights[0])) out.push(item);
    }
  }
  return out;
}

function step(values: unknown[], n: Node): unknown[] {
  switch (n.kind) {
    case 'field':
      return field(values, n.name);
    case 'wildcard':
      return values.flatMap(children);
    case 'recursive':
      return recursive(values);
    case 'array':
      return array(values, n);
    case 'union':
      return n.branches.flatMap((b) => evaluate(b, values));
    case 'filter':
      return filter(values, n);
    case 'text':
    case 'int':
    case 'float':
    case 'bool':
      return [n.value];
  }
}

/** Every value `path` selects from `values`, in kube's order; throws JsonPathError where kube's evaluation fails. */
export function evaluate(path: Path, values: unknown[]): unknown[] {
  let cur = values;
  for (const n of path) {
    cur = step(cur, n);
    if (cur.length === 0) return cur;
  }
  return cur;
}
