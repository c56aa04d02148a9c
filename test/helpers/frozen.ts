// Whether a value and everything beneath it is frozen: what the stores and
// the field manager promise of the objects they share.
export function isDeepFrozen(v: unknown): boolean {
  return typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.values(v).every(isDeepFrozen));
}
