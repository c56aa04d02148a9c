// JSON Merge Patch (RFC 7386): objects merge key by key, null removes a key,
// anything else (arrays included) replaces. Never mutates its inputs. Keys
// are data: read and written as own properties (api/own.ts).
import { isPlainObject } from '../api/meta.js';
import { ownValue, setOwn } from '../api/own.js';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, mergePatch(ownValue(out, k), v));
  }
  return out;
}
