// The one error type of lib/patch. The handler maps codes to Status errors:
// `malformed` → 400 (the patch document itself is wrong), `failed` → 422 (a
// well-formed patch that cannot apply to this object: missing path, failed
// test), `too-large` → 413.
export type PatchErrorCode = 'malformed' | 'failed' | 'too-large';

export class PatchError extends Error {
  constructor(
    readonly code: PatchErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PatchError';
  }
}
