// JSON forms of the apimachinery types whose Go MarshalJSON/UnmarshalJSON is
// hand-written: Time, MicroTime, Duration, IntOrString, Quantity. (FieldsV1 and
// RawExtension wrap JSON bytes and live in to-json.ts / from-json.ts.)
import { ProtobufError } from './errors.js';

type Msg = Record<string, unknown>;
const has = (m: Msg | undefined, k: string) => m !== undefined && Object.prototype.hasOwnProperty.call(m, k);

/** int64 fields decode as Long when the `long` package is present; JSON wants numbers. */
export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && 'toNumber' in v) return (v as { toNumber(): number }).toNumber();
  return Number(v);
}

const ZERO_TIME_SECONDS = -62135596800; // Go's time.Time{} (0001-01-01T00:00:00Z)

/** Time / MicroTime: an empty message is Go's zero time, which renders as null. */
export function timeToJson(m: Msg | undefined, micro: boolean): string | null {
  if (!has(m, 'seconds') && !has(m, 'nanos')) return null;
  const seconds = toNumber(m!.seconds ?? 0);
  const nanos = toNumber(m!.nanos ?? 0);
  if (seconds === ZERO_TIME_SECONDS && nanos === 0) return null;
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19); // Go formats in UTC
  if (!micro) return `${iso}Z`;
  return `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

export function timeFromJson(v: unknown, path: string): Msg {
  if (v === null) return {}; // zero Time: Go writes an empty message
  const m = typeof v === 'string' ? RFC3339.exec(v) : null;
  if (!m) throw new ProtobufError('invalid-value', `invalid value ${JSON.stringify(v)} for ${path}: not an RFC 3339 time`);
  const [, y, mo, d, h, mi, s, frac, sign, oh, om] = m;
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to the 1900s.
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), 0);
  let seconds = date.getTime() / 1000;
  if (sign) seconds -= (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60);
  const nanos = frac ? Number(frac.padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

// Go's time.Duration.String(): "1h2m3.5s", "1.5ms", "0s".
export function durationToJson(m: Msg | undefined): string {
  let d = BigInt(String(has(m, 'duration') ? m!.duration : 0));
  if (d === 0n) return '0s';
  const neg = d < 0n;
  if (neg) d = -d;
  const frac = (v: bigint, digits: number) => {
    const unit = 10n ** BigInt(digits);
    const f = (v % unit).toString().padStart(digits, '0').replace(/0+$/, '');
    return `${v / unit}${f ? `.${f}` : ''}`;
  };
  let out: string;
  if (d < 1000n) out = `${d}ns`;
  else if (d < 1000000n) out = `${frac(d, 3)}µs`;
  else if (d < 1000000000n) out = `${frac(d, 6)}ms`;
  else {
    const h = d / 3600000000000n;
    const min = (d / 60000000000n) % 60n;
    const s = frac(d % 60000000000n, 9);
    out = h > 0n ? `${h}h${min}m${s}s` : min > 0n ? `${min}m${s}s` : `${s}s`;
  }
  return neg ? `-${out}` : out;
}

const UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

export function durationFromJson(v: unknown, path: string): Msg {
  const bad = () => new ProtobufError('invalid-value', `invalid value ${JSON.stringify(v)} for ${path}: not a Go duration`);
  if (typeof v !== 'string') throw bad();
  const m = /^([+-])?((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(v);
  if (!m && v !== '0') throw bad();
  let total = 0;
  for (const [, num, unit] of v.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(num) * UNITS[unit!]!;
  total = Math.round(total);
  return { duration: m?.[1] === '-' ? -total : total };
}

/** IntOrString: type 0 is an int, type 1 a string. */
export function intOrStringToJson(m: Msg | undefined): number | string {
  if (toNumber(m?.type ?? 0) === 1) return String(m?.strVal ?? '');
  return toNumber(m?.intVal ?? 0);
}

export function intOrStringFromJson(v: unknown, path: string): Msg {
  if (typeof v === 'string') return { type: 1, strVal: v };
  if (typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31) return { type: 0, intVal: v };
  throw new ProtobufError('invalid-value', `invalid value ${JSON.stringify(v)} for ${path}: not an int32 or string`);
}

/** Quantity: the canonical string travels as-is; the zero Quantity renders as "0". */
export function quantityToJson(m: Msg | undefined): string {
  const s = m?.string;
  return typeof s === 'string' && s !== '' ? s : '0';
}

export function quantityFromJson(v: unknown, path: string): Msg {
  if (typeof v === 'string' && v !== '') return { string: v };
  if (typeof v === 'number' && Number.isFinite(v)) return { string: String(v) };
  throw new ProtobufError('invalid-value', `invalid value ${JSON.stringify(v)} for ${path}: not a quantity`);
}
