// Resource lists of quota (kube's quota/v1 helpers over corev1.ResourceList):
// resource name → quantity in a Map, so that a name a client wrote
// (`__proto__` among them) is only ever data.
import { isPlainObject } from '../../../lib/api/meta.js';
import {
  addQuantities,
  compareAmounts,
  quantityString,
  readQuantity,
  subtractQuantities,
  ZERO_QUANTITY,
  type Quantity,
} from '../../../lib/registry/builtins/quantities.js';

export type ResourceList = Map<string, Quantity>;

/** The quantities of a JSON map (own properties; values that are not quantities left out). */
export function resourceListOf(v: unknown): ResourceList {
  const out: ResourceList = new Map();
  if (!isPlainObject(v)) return out;
  for (const [k, raw] of Object.entries(v)) {
    const q = readQuantity(raw);
    if (q) out.set(k, q);
  }
  return out;
}

/** The JSON map of a list, each quantity in its canonical text (Object.fromEntries: every name an own property). */
export function resourceListJson(l: ResourceList): Record<string, string> {
  return Object.fromEntries([...l].map(([k, q]) => [k, quantityString(q)]));
}

/** a + b (quota.Add). */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, q] of b) {
    const cur = out.get(k);
    out.set(k, cur ? addQuantities(cur, q) : q);
  }
  return out;
}

/** a - b, each result at least zero; names of b that a lacks are left out (quota.SubtractWithNonNegativeResult). */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, q] of a) {
    const other = b.get(k);
    const d = other ? subtractQuantities(q, other) : q;
    out.set(k, d.amount.n < 0n ? { ...ZERO_QUANTITY, format: d.format } : d);
  }
  return out;
}

/** The entries whose names are in `names` (quota.Mask). */
export function mask(l: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = new Map();
  for (const k of names) {
    const q = l.get(k);
    if (q) out.set(k, q);
  }
  return out;
}

export function withoutZeros(l: ResourceList): ResourceList {
  return new Map([...l].filter(([, q]) => q.amount.n !== 0n));
}

export function negativeNames(l: ResourceList): string[] {
  return [...l].filter(([, q]) => q.amount.n < 0n).map(([k]) => k);
}

/** Whether every entry of a is at most b's (names b lacks pass), and the names that are not (quota.LessThanOrEqual). */
export function exceededNames(a: ResourceList, b: ResourceList): string[] {
  const out: string[] = [];
  for (const [k, q] of a) {
    const limit = b.get(k);
    if (limit && compareAmounts(q.amount, limit.amount) > 0) out.push(k);
  }
  return out;
}

/** Same names and amounts (quota.Equals). */
export function listsEqual(a: ResourceList, b: ResourceList): boolean {
  if (a.size !== b.size) return false;
  for (const [k, q] of a) {
    const o = b.get(k);
    if (!o || compareAmounts(q.amount, o.amount) !== 0) return false;
  }
  return true;
}

/** `name=value` sorted by name, comma-joined (the admission plugin's prettyPrint). */
export function prettyPrint(l: ResourceList): string {
  return [...l.keys()]
    .sort()
    .map((k) => `${k}=${quantityString(l.get(k)!)}`)
    .join(',');
}
