// kube's JSONPath for the paths a CRD holds (printer columns, selectable
// fields, the scale subresource): parsed once with kube's grammar
// (parse.ts), evaluated with kube's semantics (evaluate.ts).
import { evaluate } from './evaluate.js';
import { JsonPathError, parsePath, type Path } from './parse.js';

export { JsonPathError, parsePath, type Path } from './parse.js';
export { evaluate } from './evaluate.js';

/** A parsed path, or kube's parser error. */
export function compilePath(text: string): { path: Path } | { error: string } {
  try {
    return { path: parsePath(text) };
  } catch (err) {
    if (err instanceof JsonPathError) return { error: err.message };
    throw err;
  }
}

/** Every value `path` selects in `obj`; none where kube's evaluation fails. */
export function selectAll(obj: unknown, path: Path): unknown[] {
  try {
    return evaluate(path, [obj]);
  } catch (err) {
    if (err instanceof JsonPathError) return [];
    throw err;
  }
}
