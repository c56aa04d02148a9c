// The simple JSON paths a CRD holds (`.spec.replicas`,
// `.status.conditions[?(@.type=="Ready")].status`) — additionalPrinterColumns,
// selectableFields, the scale subresource — in kube's JSONPath (lib/jsonpath:
// kube's grammar and semantics, nothing else reachable). Paths named by
// string are parsed once and kept (CRDs name a bounded set of them).
import { compilePath, selectAll, type Path } from '../jsonpath/index.js';

const MAX_KEPT = 4096;
const parsed = new Map<string, Path | null>();

function pathOf(text: string): Path | null {
  let p = parsed.get(text);
  if (p === undefined) {
    const c = compilePath(text);
    p = 'path' in c ? c.path : null;
    // A bound, not an eviction policy: paths come from CRDs, far fewer than this in any cluster.
    if (parsed.size >= MAX_KEPT) parsed.clear();
    parsed.set(text, p);
  }
  return p;
}

/** Every value the path selects in `obj`, in document order (none for a path kube cannot parse). */
export function findAll(obj: unknown, path: string): unknown[] {
  if (obj === null || typeof obj !== 'object') return [];
  const p = pathOf(path);
  return p === null ? [] : selectAll(obj, p);
}

/** The first value the path selects, or undefined. */
export function findFirst(obj: unknown, path: string): unknown {
  return findAll(obj, path)[0];
}

/** The keys of a dotted simple path (`.spec.replicas` → ['spec', 'replicas']), for writes. */
export function simplePathKeys(path: string): string[] | undefined {
  if (!path.startsWith('.')) return undefined;
  const keys = path.slice(1).split('.');
  return keys.every((k) => /^[A-Za-z0-9_-]+$/.test(k)) ? keys : undefined;
}
