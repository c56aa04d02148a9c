// CEL failures, one class per phase, each naming the expression so a
// configuration error or a log line says which rule failed.

/** Closed set of reasons, so callers can branch without parsing messages. */
export type CelErrorCode = 'syntax' | 'undeclared' | 'too-large' | 'type' | 'eval' | 'cost';

export class CelCompileError extends Error {
  /** @param detail what went wrong, without the expression (callers that name the expression themselves read it) */
  constructor(
    readonly code: CelErrorCode,
    readonly expression: string,
    readonly detail: string,
  ) {
    super(`compilation failed for expression ${quote(expression)}: ${detail}`);
  }
}

export class CelEvalError extends Error {
  constructor(
    readonly code: CelErrorCode,
    readonly expression: string,
    readonly detail: string,
  ) {
    super(`evaluation of expression ${quote(expression)} failed: ${detail}`);
  }
}

/** Quotes an expression for a message, shortened so one bad rule cannot flood a log. */
export function quote(expression: string, max = 200): string {
  const s = expression.length > max ? `${expression.slice(0, max)}…` : expression;
  return JSON.stringify(s);
}
