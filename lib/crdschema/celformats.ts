// Strings whose format gives them another CEL type in kube's rules
// (k8s.io/apiserver/pkg/cel/common: date and date-time are timestamps,
// duration is a duration): the value as a rule sees it. The accepted layouts
// are those formats.ts validates (strfmt's); a string that does not parse
// stays a string, and a rule using it as a timestamp fails at evaluation, as
// kube's does on a value it cannot convert.
import { durationValue, timestampValue, type CelInput } from '../cel/index.js';

const DATE = /^(\d{4}-\d{2}-\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$/;

/** strfmt's date-time layouts as RFC 3339 (no zone is UTC, as Go parses them). */
function rfc3339(s: string): string | undefined {
  const d = DATE.exec(s);
  if (d) return `${d[1]}T00:00:00Z`;
  const m = DATE_TIME.exec(s);
  if (!m) return undefined;
  const [, day, time, frac = '', zone = 'Z'] = m as unknown as [string, string, string, string | undefined, string | undefined];
  const z = zone === 'Z' || zone === 'z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  return `${day}T${time}${frac.slice(0, 10)}${z}`;
}

const NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const GO_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;
const SCALA = /^\s*([-+]?)(\d+)\s*([a-zµμ]+)\s*$/;
const SCALA_UNITS: ReadonlyArray<readonly [RegExp, bigint]> = [
  [/^(ns|nanos?|nanoseconds?)$/, 1n],
  [/^(us|micros?|microseconds?)$/, 1_000n],
  [/^(ms|millis?|milliseconds?)$/, 1_000_000n],
  [/^(s|seconds?)$/, NS.s!],
  [/^(m|minutes?)$/, NS.m!],
  [/^(h|hours?)$/, NS.h!],
  [/^(d|days?)$/, 24n * NS.h!],
  [/^(w|weeks?)$/, 7n * 24n * NS.h!],
];

/** strfmt's durations (Go's `1h30m`, `1.5s`; `5 days`, `2w`; `0`) in nanoseconds. */
function durationNanos(s: string): bigint | undefined {
  if (s === '0') return 0n;
  const scala = SCALA.exec(s);
  if (scala) {
    const unit = SCALA_UNITS.find(([re]) => re.test(scala[3]!));
    return unit ? (scala[1] === '-' ? -1n : 1n) * BigInt(scala[2]!) * unit[1] : undefined;
  }
  const sign = s[0] === '-' ? -1n : 1n;
  const body = s[0] === '-' || s[0] === '+' ? s.slice(1) : s;
  if (!body) return undefined;
  let total = 0n;
  GO_PART.lastIndex = 0;
  let at = 0;
  for (let m = GO_PART.exec(body); m; m = GO_PART.exec(body)) {
    const [whole = '', frac = ''] = m[1]!.split('.');
    const unit = NS[m[2]!]!;
    // Go truncates fractions below a nanosecond.
    total += BigInt(whole || '0') * unit + (frac ? (BigInt(frac) * unit) / 10n ** BigInt(frac.length) : 0n);
    at = GO_PART.lastIndex;
  }
  return at === body.length ? sign * total : undefined;
}

/** The CEL value of a string under a format kube types; undefined = the string itself. */
export function formatValue(s: string, format: string): CelInput | undefined {
  switch (format) {
    case 'date':
    case 'date-time': {
      const r = rfc3339(s);
      return r === undefined ? undefined : (timestampValue(r) as CelInput | undefined);
    }
    case 'duration': {
      const n = durationNanos(s);
      return n === undefined ? undefined : (durationValue(n) as CelInput | undefined);
    }
    default:
      return undefined;
  }
}

/** Formats whose strings reach rules as another type. */
export const TYPED_FORMATS: ReadonlySet<string> = new Set(['date', 'date-time', 'duration']);
