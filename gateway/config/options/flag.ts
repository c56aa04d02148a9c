// One flag of `gatehouse serve` and the value parsers the option groups share.
// A parser throws a ConfigError with the reason (and the part of the value at
// fault, when not all of it is); the composer (../flags.ts) names the flag:
// `invalid value "x" for --flag: <reason>`.
import { ConfigError } from '../../../lib/config/error.js';
import type { ServeOptions } from '../flags.js';
import { parseDuration } from '../duration.js';

export interface Flag<O = Record<string, unknown>, K extends keyof O = keyof O> {
  name: string;
  key: K;
  /** Shown in help; the real default is in the group's defaults. */
  arg: string;
  help: string;
  boolean?: true;
  /** List flags accumulate over repeats (after the first one replaces the default); scalars keep the last value. */
  list?: true;
  /** `prev`: the value an earlier use of the same flag gave (flags that accumulate read it). */
  parse: (raw: string, prev?: O[K]) => O[K];
}

/**
 * One group of options, as kube-apiserver's options packages: its flags, their
 * defaults, and the rules between them. `checks` sees every option (some rules
 * cross groups, e.g. sidecar mode and authorization) and the flags given.
 */
export interface OptionGroup<O> {
  readonly title: string;
  readonly flags: readonly Flag<O>[];
  readonly defaults: O;
  checks?(o: ServeOptions, given: ReadonlySet<string>): string[];
}

/** A typed flag constructor for one group's options. */
export function flagsOf<O>(): <K extends keyof O>(f: Flag<O, K>) => Flag<O> {
  return (f) => f as unknown as Flag<O>;
}

export function int(raw: string, min: number, max: number, detail: string): number {
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ConfigError(detail);
  return n;
}

export function duration(raw: string, positive: boolean): number {
  const ms = parseDuration(raw);
  if (positive && ms <= 0) throw new ConfigError('must be greater than 0');
  if (ms < 0) throw new ConfigError('must not be negative');
  return ms;
}

export function nonEmpty(raw: string): string {
  if (raw === '') throw new ConfigError('must not be empty');
  return raw;
}

export function optionalPath(raw: string): string | undefined {
  return raw === '' ? undefined : raw;
}

/** strconv.ParseBool, which kube's boolean flags use. */
export function bool(raw: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(raw)) return false;
  throw new ConfigError('must be true or false');
}

/** An HTTP header name (RFC 9110 token), lowercased as Node keys headers. */
export function headerName(raw: string): string {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(nonEmpty(raw))) throw new ConfigError('must be an HTTP header name');
  return raw.toLowerCase();
}

/** Joins values inside one header: printable, and never a line break. */
export function headerSeparator(raw: string): string {
  if (!/^[\x20-\x7e]+$/.test(nonEmpty(raw))) throw new ConfigError('must be printable ASCII');
  return raw;
}

export function csv(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** One of a closed set of words. */
export function oneOf<T extends string>(words: readonly T[]): (raw: string) => T {
  return (raw) => {
    if (!(words as readonly string[]).includes(raw)) throw new ConfigError(`must be one of ${words.join(', ')}`);
    return raw as T;
  };
}

/** `a, b and c require --x` / `a requires --x`. */
export function requires(flags: readonly string[], needed: string): string {
  return `${flags.join(', ')} ${flags.length > 1 ? 'require' : 'requires'} ${needed}`;
}
