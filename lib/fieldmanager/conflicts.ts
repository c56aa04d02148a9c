// Apply conflicts as kube-apiserver reports them: 409 Conflict, one
// FieldManagerConflict cause per field and owner, and the message of
// apimachinery's NewApplyConflict.
import { StatusError, type StatusCause } from '../api/status.js';
import { describeOwner } from './managers.js';
import type { Conflict } from './ownership.js';
import { comparePathElements, pathString } from './set.js';

function comparePaths(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = comparePathElements(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

export function conflictStatus(conflicts: readonly Conflict[]): StatusError {
  const sorted = [...conflicts].sort((x, y) => {
    const a = describeOwner(x.owner);
    const b = describeOwner(y.owner);
    return a < b ? -1 : a > b ? 1 : comparePaths(x.path, y.path);
  });
  const causes: StatusCause[] = sorted.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${describeOwner(c.owner)}`,
    field: pathString(c.path),
  }));
  let detail: string;
  if (sorted.length === 1) {
    detail = `conflict with ${describeOwner(sorted[0]!.owner)}: ${pathString(sorted[0]!.path)}`;
  } else {
    const lines: string[] = [];
    let current = '';
    for (const c of sorted) {
      const who = describeOwner(c.owner);
      if (who !== current) {
        lines.push(`conflicts with ${who}:`);
        current = who;
      }
      lines.push(`- ${pathString(c.path)}`);
    }
    detail = lines.join('\n');
  }
  const n = sorted.length;
  return new StatusError(409, 'Conflict', `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${detail}`, { causes });
}
