// Applies one parsed patch document of a given type to an object: the
// backend's PATCH and the admission plugins that must judge the object a
// PATCH would produce use this one function.
import type { StructNode } from '../schema/model.js';
import { applyJsonPatch, parseJsonPatch } from './json.js';
import { mergePatch } from './merge.js';
import { strategicMergePatch } from './strategic.js';
import { PatchError } from './errors.js';
import { cloneJson } from '../api/json.js';

export type AppliedPatchType = 'json' | 'merge' | 'strategic';

/** Throws PatchError ('malformed' | 'failed' | 'too-large'). `budget` bounds growth by JSON patch copies. */
export function applyPatchDocument(
  type: AppliedPatchType,
  current: Record<string, unknown>,
  doc: unknown,
  schema: StructNode | undefined,
  budget: number,
): unknown {
  switch (type) {
    case 'json':
      return applyJsonPatch(current, parseJsonPatch(doc), budget);
    case 'merge':
      return mergePatch(cloneJson(current), doc);
    case 'strategic':
      if (!schema) throw new PatchError('malformed', 'strategic merge patch needs the schema of the type');
      return strategicMergePatch(current, doc as Record<string, unknown>, schema);
  }
}
