// Where a schema check is, for a caller that bounds its time: the CRD check
// worker reports the field it is about to compile (a pattern, a CEL rule), so
// a check stopped at its time budget is refused naming that field. Unset (the
// event loop, every other caller), a step costs one comparison.
let hook: ((field: string) => void) | undefined;

/** Sets (or clears) what hears each costly step; the check worker sets it once. */
export function onCostlyStep(fn: ((field: string) => void) | undefined): void {
  hook = fn;
}

/** Announces a costly step at `field` (the compile of a pattern or an expression follows). */
export function costlyStep(field: string): void {
  if (hook !== undefined) hook(field);
}
