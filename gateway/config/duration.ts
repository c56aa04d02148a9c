// Go-style durations (`300ms`, `1h30m`, `2m0s`, `0`), the syntax kube-apiserver
// flags use, so command lines copied from a real cluster keep working.

import { ConfigError } from '../../lib/config/error.js';

/** Milliseconds per unit. Go also accepts `µs`/`μs`; sub-millisecond values become fractions. */
const UNITS: ReadonlyMap<string, number> = new Map([
  ['ns', 1e-6],
  ['us', 1e-3],
  ['µs', 1e-3],
  ['μs', 1e-3],
  ['ms', 1],
  ['s', 1000],
  ['m', 60_000],
  ['h', 3_600_000],
]);

/** Parses a Go duration into milliseconds; throws a ConfigError whose reason is fit to follow a colon (the caller knows the flag or field). */
export function parseDuration(input: string): number {
  let s = input;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    sign = s.startsWith('-') ? -1 : 1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw new ConfigError('must be a duration such as 300ms, 4s or 1h30m');
  let total = 0;
  // One `<number><unit>` term at a time, as time.ParseDuration does.
  const term = /^([0-9]*(?:\.[0-9]*)?)([^0-9.]*)/;
  while (s !== '') {
    const m = term.exec(s);
    const num = m?.[1] ?? '';
    const unit = m?.[2] ?? '';
    if (num === '' || num === '.') throw new ConfigError('must be a duration such as 300ms, 4s or 1h30m');
    if (unit === '') throw new ConfigError('missing unit (one of ns, us, ms, s, m, h)');
    const perUnit = UNITS.get(unit);
    if (perUnit === undefined) throw new ConfigError(`unknown unit "${unit}" (use ns, us, ms, s, m or h)`);
    total += Number(num) * perUnit;
    s = s.slice(num.length + unit.length);
  }
  // Go caps durations at ~292 years (int64 nanoseconds); beyond that a typo is likelier than intent.
  if (total > 9_223_372_036_854) throw new ConfigError('duration is too large');
  return sign * total;
}

/** Formats milliseconds the way Go prints a Duration (`5m0s`, `1h30m0s`, `300ms`, `0s`), for help text. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(ms);
  if (rest < 1000) return `${neg ? '-' : ''}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  const out = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  return `${neg ? '-' : ''}${out}`;
}
