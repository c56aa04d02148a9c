// Between JSON-shaped data and CEL values. JSON numbers become CEL doubles,
// as they do in Kubernetes (claims are decoded into map[string]any first).
import { celEnv, CelScalar, isCelError, isCelList, isCelMap, parse, plan, type CelInput, type CelValue } from '@bufbuild/cel';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A JSON value as a CEL input (objects become maps). */
export function fromJson(v: unknown): CelInput {
  if (v === null || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'number') return v;
  if (Array.isArray(v)) return v.map(fromJson);
  if (typeof v === 'object') {
    const m = new Map<string, CelInput>();
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) m.set(k, fromJson(x));
    return m;
  }
  return null;
}

/** What a result is, for messages ("bool", "string", "list", …). */
export function kindOf(v: CelValue): string {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string' || typeof v === 'boolean') return typeof v === 'string' ? 'string' : 'bool';
  if (isCelList(v)) return 'list';
  if (isCelMap(v)) return 'map';
  return 'object';
}

/** A CEL result as a string list, or undefined when it is not one. */
export function stringList(v: CelValue): string[] | undefined {
  if (!isCelList(v)) return undefined;
  const out: string[] = [];
  for (const x of v) {
    if (typeof x !== 'string') return undefined;
    out.push(x);
  }
  return out;
}

// Timestamps and durations are protobuf messages in @bufbuild/cel; they are
// made by its own `timestamp(string)` and `duration(string)` (run as
// programs: its functions need an evaluation context) so that no protobuf
// runtime is needed here.
// Planned on first use, not at load (~70 ms of a start's CPU: the first parse).
const castEnvOf = () => celEnv({ variables: { s: CelScalar.STRING } });
const planCast = (env: ReturnType<typeof castEnvOf>, expr: string) => plan(env, parse(expr));
type Cast = ReturnType<typeof planCast>;
let casts: { readonly toTimestamp: Cast; readonly toDuration: Cast } | undefined;
function castPrograms(): { readonly toTimestamp: Cast; readonly toDuration: Cast } {
  if (casts) return casts;
  const castEnv = castEnvOf();
  casts = { toTimestamp: planCast(castEnv, 'timestamp(s)'), toDuration: planCast(castEnv, 'duration(s)') };
  return casts;
}

function cast(program: Cast, s: string): CelValue | undefined {
  const r = program({ s });
  return isCelError(r) ? undefined : r;
}

/** An RFC 3339 timestamp (`2020-01-02T03:04:05.5Z`) as a CEL timestamp; undefined when it is not one CEL accepts. */
export function timestampValue(rfc3339: string): CelValue | undefined {
  return cast(castPrograms().toTimestamp, rfc3339);
}

/** A number of nanoseconds as a CEL duration; undefined outside CEL's range. */
export function durationValue(nanos: bigint): CelValue | undefined {
  return cast(castPrograms().toDuration, `${nanos}ns`);
}
