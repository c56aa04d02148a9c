// Compiling a configuration expression in the shared CEL environment; a
// compile error becomes a field error naming the field and the expression.
import { CelCompileError, type CelEnvironment, type CompiledExpression } from '../../lib/cel/index.js';
import type { Errors } from './authnconfig-read.js';
import { fieldError, type FieldPath } from './fielderrors.js';

export function compileAt(env: CelEnvironment, expression: string, p: FieldPath, errs: Errors): CompiledExpression | undefined {
  try {
    return env.compile(expression);
  } catch (err) {
    if (!(err instanceof CelCompileError)) throw err;
    errs.push(fieldError.invalid(p, expression, err.message));
    return undefined;
  }
}
