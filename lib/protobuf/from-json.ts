// Kubernetes JSON → plain object shaped for protobufjs `Type.encode`. Every
// value is checked against the table so a misfit surfaces as a ProtobufError
// naming the field path, not as corrupt bytes.
import { ProtobufError } from './errors.js';
import type { FieldPlan, MessagePlan } from './registry.js';
import { durationFromJson, intOrStringFromJson, quantityFromJson, timeFromJson } from './wellknown.js';
import { setOwn } from '../api/own.js';

type Msg = Record<string, unknown>;

const invalid = (path: string, v: unknown, want: string) =>
  new ProtobufError('invalid-value', `invalid value ${JSON.stringify(v)?.slice(0, 80)} for ${path}: expected ${want}`);

const isObject = (v: unknown): v is Msg => typeof v === 'object' && v !== null && !Array.isArray(v);

const jsonBytes = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');

export function messageFromJson(plan: MessagePlan, v: unknown, path: string): Msg {
  switch (plan.custom) {
    case 'Time':
    case 'MicroTime':
      return timeFromJson(v, path);
    case 'Duration':
      return durationFromJson(v, path);
    case 'IntOrString':
      return intOrStringFromJson(v, path);
    case 'Quantity':
      return quantityFromJson(v, path);
    case 'FieldsV1':
      return v === null ? {} : { Raw: jsonBytes(v) };
    case 'RawExtension':
      return v === null ? {} : { raw: jsonBytes(v) };
    case undefined:
      break;
  }
  if (plan.namedSlice) {
    if (v === null) return {};
    if (!Array.isArray(v)) throw invalid(path, v, 'an array');
    return { items: v.map((x, i) => value(plan.fields[0]!, x, `${path}[${i}]`)) };
  }
  if (!isObject(v)) throw invalid(path, v, 'an object');
  const out: Msg = {};
  for (const [key, x] of Object.entries(v)) {
    const hit = plan.byJson.get(key);
    if (!hit) {
      if (key === 'apiVersion' || key === 'kind') continue; // TypeMeta lives in the envelope
      throw new ProtobufError('invalid-value', `unknown field "${path}.${key}" for ${plan.name}`);
    }
    if (x === null) continue; // Go decodes null as the zero value; absent encodes the same
    let target = out;
    for (const inl of hit.via) target = (target[inl.protoName] ??= {}) as Msg;
    target[hit.field.protoName] = field(hit.field, x, `${path}.${key}`);
  }
  return out;
}

function field(f: FieldPlan, x: unknown, path: string): unknown {
  if (f.repeated) {
    if (!Array.isArray(x)) throw invalid(path, x, 'an array');
    return x.map((e, i) => value(f, e, `${path}[${i}]`));
  }
  if (f.keyType) {
    if (!isObject(x)) throw invalid(path, x, 'an object');
    const out: Msg = {};
    for (const [k, e] of Object.entries(x)) setOwn(out, k, value(f, e, `${path}.${k}`));
    return out;
  }
  return value(f, x, path);
}

const INT_RANGE: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};

function value(f: FieldPlan, x: unknown, path: string): unknown {
  if (f.msg) return messageFromJson(f.msg, x, path);
  switch (f.type) {
    case 'string':
      if (typeof x !== 'string') throw invalid(path, x, 'a string');
      return x;
    case 'bool':
      if (typeof x !== 'boolean') throw invalid(path, x, 'a boolean');
      return x;
    case 'bytes':
      if (typeof x !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(x)) throw invalid(path, x, 'base64 bytes');
      return Buffer.from(x, 'base64');
    case 'double':
    case 'float':
      if (typeof x !== 'number') throw invalid(path, x, 'a number');
      return x;
    default: {
      const [lo, hi] = INT_RANGE[f.type]!;
      if (typeof x !== 'number' || !Number.isInteger(x) || x < lo || x > hi) throw invalid(path, x, `an ${f.type}`);
      return x;
    }
  }
}
