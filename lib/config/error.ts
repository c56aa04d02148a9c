// One error for every invalid flag, configuration file or value read at
// start or on reload, and the one line the command line prints for it
// (DESIGN.md section 3: the flag or field and the reason, never a stack).
// Parsers that do not know which flag fed them (a duration, a token file, a
// kubeconfig) throw it with what they know; the caller that does know
// re-raises it with `forFlag`, so nobody slices another module's message.

/** Where a problem is. Every part is optional; a message shows the ones given. */
export interface ConfigWhere {
  /** The flag as given: `--secure-port`, `-v`. */
  readonly flag?: string;
  /** The value at fault, shown quoted. Never a secret: callers pass a redacted form (a Redis URL without its password). */
  readonly value?: string;
  /** The file, as messages name it (a path, or a label such as `--audit-policy-file policy.yaml`). */
  readonly file?: string;
  /** What a value or file is when no flag names it: `redis url`, `kubeconfig`. */
  readonly kind?: string;
  /** Inside the value or file: a field path (`jwt[0].issuer.url`) or a line (`line 3`). */
  readonly field?: string;
}

export class ConfigError extends Error {
  constructor(
    /** Why it is wrong, fit to follow a colon. */
    readonly reason: string,
    readonly where: ConfigWhere = {},
  ) {
    super(formatConfigError(reason, where));
  }

  /** The same problem reported against the flag whose value it is (the file's name, when the flag names a file). */
  forFlag(flag: string, value: string): ConfigError {
    return new ConfigError(this.reason, { flag, value: this.where.value ?? value, ...(this.where.field !== undefined ? { field: this.where.field } : {}) });
  }

  /** The same problem one level down a path: `line 3` then `kind` reads `line 3: kind`. */
  within(field: string): ConfigError {
    return new ConfigError(this.reason, { ...this.where, field: this.where.field === undefined ? field : `${field}: ${this.where.field}` });
  }
}

/**
 * `invalid value "abc" for --secure-port: must be …`, `invalid redis url "…": …`,
 * `--tls-cert-file "a.crt": …`, `kubeconfig "k.yaml": users[0].user: …`,
 * `f.csv: line 3: …`, `--runtime-config: …`; the field, when given, before the reason.
 */
export function formatConfigError(reason: string, w: ConfigWhere): string {
  const namer = w.flag ?? w.kind;
  let head: string | undefined;
  if (w.value !== undefined) head = w.flag !== undefined ? `invalid value "${w.value}" for ${w.flag}` : `invalid ${w.kind ?? 'value'} "${w.value}"`;
  else if (w.file !== undefined) head = namer !== undefined ? `${namer} "${w.file}"` : w.file;
  else head = namer;
  return [head, w.field, reason].filter((p) => p !== undefined && p !== '').join(': ');
}

/**
 * The line `gatehouse` writes to stderr before exiting 1: `gatehouse: `, the
 * step that failed when there is one (`cannot start`), and the message on one
 * line (a library's multi-line text is joined, so a log reader sees one record).
 */
export function cliErrorLine(err: unknown, step?: string): string {
  const text = err instanceof Error ? err.message : String(err);
  return `gatehouse: ${step === undefined ? '' : `${step}: `}${text.replace(/\s*\n\s*/g, ' ')}\n`;
}
