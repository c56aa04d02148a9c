// Decoded protobufjs message → the JSON kube-apiserver would store: Go field
// names, omitempty / pointer presence as the Go struct tags say, and the
// hand-written JSON forms of the apimachinery types.
import { ProtobufError } from './errors.js';
import { hasMagic, readUnknown } from './envelope.js';
import { planForKind, type FieldPlan, type MessagePlan } from './registry.js';
import { durationToJson, intOrStringToJson, quantityToJson, timeToJson, toNumber } from './wellknown.js';

type Msg = Record<string, unknown>;
type Json = unknown;
const hasOwn = (m: Msg | undefined, k: string) => m !== undefined && Object.prototype.hasOwnProperty.call(m, k);

/** Bytes carrying JSON (FieldsV1, RawExtension). A nested envelope is decoded too. */
function embeddedJson(raw: unknown, what: string): Json {
  if (!(raw instanceof Uint8Array) || raw.length === 0) return null;
  if (hasMagic(raw)) return decodeObject(raw);
  try {
    return JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8'));
  } catch {
    throw new ProtobufError('invalid-value', `invalid ${what}: bytes are not JSON`);
  }
}

export function messageToJson(plan: MessagePlan, m: Msg | undefined): Json {
  switch (plan.custom) {
    case 'Time':
      return timeToJson(m, false);
    case 'MicroTime':
      return timeToJson(m, true);
    case 'Duration':
      return durationToJson(m);
    case 'IntOrString':
      return intOrStringToJson(m);
    case 'Quantity':
      return quantityToJson(m);
    case 'FieldsV1':
      return embeddedJson(m?.Raw, 'FieldsV1');
    case 'RawExtension':
      return embeddedJson(m?.raw, 'RawExtension');
    case undefined:
      break;
  }
  if (plan.namedSlice) {
    const items = m?.items as unknown[] | undefined;
    return items && items.length > 0 ? items.map((v) => scalar(plan.fields[0]!, v)) : null;
  }
  const out: Record<string, Json> = {};
  fill(plan, m, out);
  return out;
}

function scalar(f: FieldPlan, v: unknown): Json {
  if (f.msg) return messageToJson(f.msg, v as Msg);
  if (f.type === 'bytes') return Buffer.from(v as Uint8Array).toString('base64');
  if (f.type === 'int64' || f.type === 'uint64') return toNumber(v);
  return v;
}

const isZero = (v: Json) => v === '' || v === 0 || v === false || v === null;

function fill(plan: MessagePlan, m: Msg | undefined, out: Record<string, Json>): void {
  for (const f of plan.fields) {
    const present = hasOwn(m, f.protoName);
    const v = present ? m![f.protoName] : undefined;
    if (f.inline) {
      fill(f.msg!, v as Msg | undefined, out);
    } else if (f.repeated) {
      const list = v as unknown[] | undefined;
      if (list && list.length > 0) out[f.jsonName] = list.map((x) => scalar(f, x));
      else if (!f.omitempty) out[f.jsonName] = null; // Go nil slice
    } else if (f.keyType) {
      const entries = v ? Object.entries(v as Msg) : [];
      if (entries.length > 0) out[f.jsonName] = Object.fromEntries(entries.map(([k, x]) => [k, scalar(f, x)]));
      else if (!f.omitempty) out[f.jsonName] = null; // Go nil map
    } else if (f.pointer) {
      if (present) out[f.jsonName] = scalar(f, v);
    } else if (f.msg) {
      // A Go struct value is always rendered (omitempty does not apply to structs).
      const json = messageToJson(f.msg, v as Msg | undefined);
      if (!(f.omitzero && json === null)) out[f.jsonName] = json;
    } else if (f.type === 'bytes') {
      // []byte: nil when absent; Go's decoder makes a present empty field []byte{}.
      const json = present ? scalar(f, v) : null;
      if (!(f.omitempty && (json === null || json === ''))) out[f.jsonName] = json;
    } else {
      const json = present ? scalar(f, v) : ZERO[f.type];
      if (!(f.omitempty && isZero(json))) out[f.jsonName] = json;
    }
  }
}

const ZERO: Record<string, Json> = { string: '', bool: false, int32: 0, int64: 0, uint32: 0, uint64: 0, double: 0, float: 0 };

/** Decodes an envelope into `{kind, apiVersion, ...fields}`. */
export function decodeObject(buf: Uint8Array): Record<string, Json> {
  const u = readUnknown(buf);
  const plan = planForKind(u.apiVersion, u.kind);
  if (!plan) throw new ProtobufError('unknown-kind', `unknown kind "${u.apiVersion} ${u.kind}": no protobuf schema`);
  let body: Json;
  if (u.contentType === 'application/json') {
    body = embeddedJson(u.raw, `${u.apiVersion} ${u.kind}`);
  } else if (u.contentType === '' || u.contentType.startsWith('application/vnd.kubernetes.protobuf')) {
    let m: Msg;
    try {
      m = plan.type.decode(u.raw) as unknown as Msg;
    } catch (err) {
      throw new ProtobufError('malformed', `truncated or malformed protobuf message for "${u.apiVersion} ${u.kind}": ${(err as Error).message}`);
    }
    body = messageToJson(plan, m);
  } else {
    throw new ProtobufError('unsupported-encoding', `contentType "${u.contentType}" not supported`);
  }
  const { kind: _k, apiVersion: _a, ...rest } = (body ?? {}) as Record<string, Json>;
  return { kind: u.kind, apiVersion: u.apiVersion, ...rest };
}
