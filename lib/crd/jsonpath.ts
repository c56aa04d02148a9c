// kubectl-style simple JSON paths (`.spec.replicas`,
// `.status.conditions[?(@.type=="Ready")].status`) as additionalPrinterColumns,
// selectableFields and the scale subresource use them, evaluated by
// jsonpath-plus (its safe evaluator: no script runs). Paths are compiled by
// the library's own cache, once per distinct path.
import { JSONPath } from 'jsonpath-plus';

/** Every value the path selects in `obj`, in document order. */
export function findAll(obj: unknown, path: string): unknown[] {
  if (obj === null || typeof obj !== 'object') return [];
  try {
    const out = JSONPath({ path: `$${path}`, json: obj as object, wrap: true, eval: 'safe' }) as unknown;
    return Array.isArray(out) ? out : [];
  } catch {
    return [];
  }
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
