// JSON Merge Patch (RFC 7386): objects merge key by key, null removes a key,
// anything else (arrays included) replaces. Never mutates its inputs.
import { isPlainObject } from '../api/meta.js';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
