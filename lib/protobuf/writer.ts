// Kubernetes JSON → protobuf wire bytes in one walk of the object, written
// straight into one reused buffer over the message plans: no intermediate
// message objects and no protobufjs on the way. The bytes are the ones
// protobufjs's `encode(messageFromJson(…))` writes (fields by number, a
// present field written even when zero, as proto2 does; a map's entries in
// the object's key order); test/protobuf/writer.test.ts holds the two to
// byte-for-byte equality for every served kind.
//
// The writer only takes the well-formed road. Anything else (an unknown or
// undefined member, a value of the wrong type or range, a string that is not
// base64 where bytes are expected, a body nested past the depth limit) makes
// it give up, and the caller encodes the object through from-json.ts, which
// names the field in its error: the two can never disagree on what is valid.
import type { FieldPlan, MessagePlan } from './registry.js';
import { durationFromJson, timeFromJson } from './wellknown.js';

/** Thrown (never escapes this module) when the object is not on the well-formed road. */
const GIVE_UP = new Error('protobuf writer: not well formed');

const MAX_DEPTH = 100; // protobufjs's own recursion limit

interface Slot {
  field: FieldPlan;
  /** The JSON member read from the object; for an inline field, the fields of `inline` are read instead. */
  json: string;
  /** Whether `json` names something every object inherits, so it is read only as an own member. */
  inherited: boolean;
  inline?: Writer;
}

interface Writer {
  plan: MessagePlan;
  /** Fields in field-number order, as protobufjs writes them. */
  slots: Slot[];
  /** `apiVersion` / `kind` are skipped (TypeMeta lives in the envelope) where the message has no such field. */
  skipApiVersion: boolean;
  skipKind: boolean;
  /** proto name → field number, for the hand-written forms (Time's seconds, …). */
  ids: Record<string, number>;
}

const writers = new Map<MessagePlan, Writer>();

function writerFor(plan: MessagePlan): Writer {
  let w = writers.get(plan);
  if (w === undefined) {
    w = {
      plan,
      slots: [],
      skipApiVersion: !plan.byJson.has('apiVersion'),
      skipKind: !plan.byJson.has('kind'),
      ids: Object.fromEntries(plan.fields.map((f) => [f.protoName, f.id])),
    };
    writers.set(plan, w); // before the slots: schemas refer to themselves (JSONSchemaProps-like cycles)
    w.slots = [...plan.fields]
      .sort((a, b) => a.id - b.id)
      .map((field) => ({
        field,
        json: field.jsonName,
        inherited: field.jsonName in Object.prototype,
        ...(field.inline && field.msg ? { inline: writerFor(field.msg) } : {}),
      }));
  }
  return w;
}

// The output buffer, reused by every encode: grown when an object needs it, dropped back when it grew large.
const START = 64 * 1024;
let buf = Buffer.allocUnsafe(START);
let pos = 0;

function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  const next = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(next, 0, 0, pos);
  buf = next;
}

/**
 * Writes the message of `obj` (without envelope) into the shared buffer and
 * returns its length, or -1 when the object is not well formed (encode it
 * through from-json.ts then: its error names the field). The bytes stay in
 * the buffer until the next call: take them with `copyMessage`.
 */
export function writeMessage(plan: MessagePlan, obj: unknown): number {
  pos = 0;
  try {
    messageBody(writerFor(plan), obj, 0);
  } catch (err) {
    if (buf.length > 16 * START) buf = Buffer.allocUnsafe(START);
    if (err === GIVE_UP) return -1;
    throw err;
  }
  return pos;
}

/** Copies the message `writeMessage` just wrote to `target` at `at`; drops a grown buffer. */
export function copyMessage(target: Uint8Array, at: number): void {
  buf.copy(target, at, 0, pos);
  if (buf.length > 16 * START) buf = Buffer.allocUnsafe(START);
}

// ---- wire primitives ----

function varint32(v: number): void {
  while (v > 0x7f) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
}

/** A 64-bit varint of a safe integer (negative ones as two's complement, ten bytes). */
function varint64(value: number): void {
  const neg = value < 0;
  if (neg) value = -value;
  let lo = value >>> 0;
  let hi = ((value - lo) / 4294967296) >>> 0;
  if (neg) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
    if (++lo > 4294967295) {
      lo = 0;
      if (++hi > 4294967295) hi = 0;
    }
  }
  while (hi !== 0) {
    buf[pos++] = (lo & 0x7f) | 0x80;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  varint32(lo);
}

const varintSize = (v: number) => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

/** Closes a length-delimited field whose one-byte length slot is at `slot`: a longer length moves the body up. */
function endLen(slot: number): void {
  const len = pos - slot - 1;
  if (len < 0x80) {
    buf[slot] = len;
    return;
  }
  const extra = varintSize(len) - 1;
  ensure(extra);
  buf.copyWithin(slot + 1 + extra, slot + 1, pos);
  pos += extra;
  const end = pos;
  pos = slot;
  varint32(len);
  pos = end;
}

/** Opens a length-delimited field: its key, then a one-byte length slot; returns the slot. */
function beginLen(key: number): number {
  ensure(6);
  varint32(key);
  return pos++;
}

function string(key: number, s: string): void {
  const n = s.length;
  ensure(11 + n * 3);
  varint32(key);
  if (n < 43) {
    // At most 3 bytes per UTF-16 unit: the length fits one byte. ASCII is copied here (a native write costs more).
    const slot = pos++;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) break;
      buf[slot + 1 + i] = c;
    }
    pos = i === n ? pos + n : pos + utf8Write(s, pos);
    buf[slot] = pos - slot - 1;
    return;
  }
  const len = Buffer.byteLength(s, 'utf8');
  varint32(len);
  pos += utf8Write(s, pos);
}

// Node's own UTF-8 writer (what protobufjs calls too): `buf.write(s, at, 'utf8')` first parses its arguments.
const utf8Write = (s: string, at: number): number => (buf as unknown as { utf8Write(s: string, at: number): number }).utf8Write(s, at);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function bytesFromBase64(key: number, s: unknown): void {
  if (typeof s !== 'string' || !BASE64.test(s)) throw GIVE_UP;
  ensure(11 + s.length);
  const slot = beginLen(key);
  pos += buf.write(s, pos, 'base64');
  endLen(slot);
}

// ---- messages ----

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Members present (not undefined) in the last `fields` call, and how many of them were not null. */
let seen = 0;
let nonNull = 0;

/** The body of one message from its JSON value (custom JSON forms included). */
function messageBody(w: Writer, v: unknown, depth: number): void {
  if (depth > MAX_DEPTH) throw GIVE_UP;
  const plan = w.plan;
  if (plan.custom !== undefined) return custom(w, v);
  if (plan.namedSlice) {
    if (v === null) return;
    if (!Array.isArray(v)) throw GIVE_UP;
    const f = w.slots[0]!.field;
    for (let i = 0; i < v.length; i++) value(f, v[i], depth);
    return;
  }
  if (!isObject(v)) throw GIVE_UP;
  fields(w, v, depth);
  let known = seen;
  // TypeMeta lives in the envelope: skipped where the message has no such field, as from-json.ts does.
  if (w.skipApiVersion && v.apiVersion !== undefined && Object.hasOwn(v, 'apiVersion')) known++;
  if (w.skipKind && v.kind !== undefined && Object.hasOwn(v, 'kind')) known++;
  // Every member must be one of the message's (an unknown one is an error from-json.ts words).
  if (known !== Object.keys(v).length) throw GIVE_UP;
}

/** Writes the fields of `w` read from `v`; sets `seen` and `nonNull` for the caller. */
function fields(w: Writer, v: Record<string, unknown>, depth: number): void {
  let present = 0;
  let filled = 0;
  const slots = w.slots;
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    if (slot.inline !== undefined) {
      // An embedded struct: its members sit in `v` itself; its message is written when one of them is not null.
      const at = pos;
      const lenSlot = beginLen((slot.field.id << 3) | 2);
      fields(slot.inline, v, depth + 1);
      present += seen;
      if (nonNull === 0) pos = at;
      else {
        filled++;
        endLen(lenSlot);
      }
      continue;
    }
    const x = slot.inherited ? (Object.hasOwn(v, slot.json) ? v[slot.json] : undefined) : v[slot.json];
    if (x === undefined) continue;
    present++;
    if (x === null) continue; // Go decodes null as the zero value; absent encodes the same
    filled++;
    member(slot.field, x, depth);
  }
  seen = present;
  nonNull = filled;
}

function member(f: FieldPlan, x: unknown, depth: number): void {
  if (f.repeated) {
    if (!Array.isArray(x)) throw GIVE_UP;
    for (let i = 0; i < x.length; i++) value(f, x[i], depth);
    return;
  }
  if (f.keyType !== undefined) {
    if (!isObject(x)) throw GIVE_UP;
    const entryKey = (f.id << 3) | 2;
    const keys = Object.keys(x);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const slot = beginLen(entryKey);
      string(0x0a, k); // a map entry is message { key = 1; value = 2 } (protobuf's map layout)
      const e = x[k];
      if (f.msg !== undefined) {
        const inner = beginLen(0x12);
        messageBody(writerFor(f.msg), e, depth + 1);
        endLen(inner);
      } else scalar(f.type, 2, e);
      endLen(slot);
    }
    return;
  }
  value(f, x, depth);
}

/** One value of field `f` with its key. */
function value(f: FieldPlan, x: unknown, depth: number): void {
  if (f.msg !== undefined) {
    const slot = beginLen((f.id << 3) | 2);
    messageBody(writerFor(f.msg), x, depth + 1);
    endLen(slot);
    return;
  }
  scalar(f.type, f.id, x);
}

function scalar(type: string, id: number, x: unknown): void {
  switch (type) {
    case 'string':
      if (typeof x !== 'string') throw GIVE_UP;
      return string((id << 3) | 2, x);
    case 'bool':
      if (typeof x !== 'boolean') throw GIVE_UP;
      ensure(6);
      varint32(id << 3);
      buf[pos++] = x ? 1 : 0;
      return;
    case 'bytes':
      return bytesFromBase64((id << 3) | 2, x);
    case 'double':
      if (typeof x !== 'number') throw GIVE_UP;
      ensure(13);
      varint32((id << 3) | 1);
      pos = buf.writeDoubleLE(x, pos);
      return;
    case 'float':
      if (typeof x !== 'number') throw GIVE_UP;
      ensure(9);
      varint32((id << 3) | 5);
      pos = buf.writeFloatLE(x, pos);
      return;
    case 'int32':
      if (typeof x !== 'number' || !Number.isInteger(x) || x < -(2 ** 31) || x > 2 ** 31 - 1) throw GIVE_UP;
      ensure(15);
      varint32(id << 3);
      if (x < 0) varint64(x);
      else varint32(x);
      return;
    case 'uint32':
      if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 2 ** 32 - 1) throw GIVE_UP;
      ensure(15);
      varint32(id << 3);
      varint32(x);
      return;
    case 'int64':
    case 'uint64':
      if (typeof x !== 'number' || !Number.isSafeInteger(x) || (type === 'uint64' && x < 0)) throw GIVE_UP;
      ensure(15);
      varint32(id << 3);
      varint64(x);
      return;
    default:
      throw GIVE_UP;
  }
}

// ---- the hand-written JSON forms (wellknown.ts's, as bytes) ----

// The last time string and its message body: an object's timestamps are often one second.
let lastTime = '';
let lastTimeBody = Buffer.alloc(0);

const key = (w: Writer, protoName: string, wire: number) => (w.ids[protoName]! << 3) | wire;

function custom(w: Writer, v: unknown): void {
  switch (w.plan.custom) {
    case 'Time':
    case 'MicroTime': {
      if (v === null) return; // the zero time: an empty message
      if (typeof v !== 'string') throw GIVE_UP;
      if (v !== lastTime) {
        let t: Record<string, unknown>;
        try {
          t = timeFromJson(v, '');
        } catch {
          throw GIVE_UP;
        }
        const start = pos;
        ensure(30);
        varint32(key(w, 'seconds', 0));
        varint64(t.seconds as number);
        varint32(key(w, 'nanos', 0));
        varint64(t.nanos as number); // an int32 ≥ 0: the same bytes
        lastTimeBody = Buffer.from(buf.subarray(start, pos));
        lastTime = v;
        return;
      }
      ensure(lastTimeBody.length);
      pos += lastTimeBody.copy(buf, pos);
      return;
    }
    case 'Duration': {
      let d: Record<string, unknown>;
      try {
        d = durationFromJson(v, '');
      } catch {
        throw GIVE_UP;
      }
      if (!Number.isSafeInteger(d.duration)) throw GIVE_UP;
      ensure(15);
      varint32(key(w, 'duration', 0));
      varint64(d.duration as number);
      return;
    }
    case 'IntOrString':
      if (typeof v === 'string') {
        ensure(15);
        varint32(key(w, 'type', 0));
        varint32(1);
        string(key(w, 'strVal', 2), v);
        return;
      }
      if (typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31) {
        ensure(30);
        varint32(key(w, 'type', 0));
        varint32(0);
        varint32(key(w, 'intVal', 0));
        varint64(v); // int32: a negative one is a ten-byte varint too
        return;
      }
      throw GIVE_UP;
    case 'Quantity':
      if (typeof v === 'string' && v !== '') return string(key(w, 'string', 2), v);
      if (typeof v === 'number' && Number.isFinite(v)) return string(key(w, 'string', 2), String(v));
      throw GIVE_UP;
    case 'FieldsV1':
    case 'RawExtension': {
      if (v === null) return;
      const text = JSON.stringify(v);
      if (typeof text !== 'string') throw GIVE_UP;
      // The bytes field holds the JSON text's UTF-8, which is how a string is written.
      return string(key(w, w.plan.custom === 'FieldsV1' ? 'Raw' : 'raw', 2), text);
    }
    default:
      throw GIVE_UP;
  }
}
