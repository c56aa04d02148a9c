// Public API: Kubernetes protobuf bodies ⇄ the JSON objects the server stores.
import { ProtobufError } from './errors.js';
import { MAGIC, rawField, typeMetaField, unknownParts, unknownTail, writeUnknown } from './envelope.js';
import { messageFromJson } from './from-json.js';
import { fieldId, planFor, planForKind, type MessagePlan } from './registry.js';
import { decodeObject } from './to-json.js';
import { lenPrefix, putVarint, varintSize } from './wire.js';
import { copyMessage, writeMessage } from './writer.js';

export { ProtobufError, type ProtobufErrorCode } from './errors.js';
export { MAGIC, PROTOBUF_MEDIA_TYPE } from './envelope.js';

export interface DecodedEnvelope {
  apiVersion: string;
  kind: string;
  /** The Kubernetes JSON form, `kind` and `apiVersion` first. */
  object: Record<string, unknown>;
}

/** True when `apiVersion`/`kind` can be decoded from and encoded to protobuf here. */
export function hasSchema(apiVersion: string, kind: string): boolean {
  return planForKind(apiVersion, kind) !== undefined;
}

/** Decodes a `application/vnd.kubernetes.protobuf` body. Throws only ProtobufError. */
export function decodeEnvelope(buf: Uint8Array): DecodedEnvelope {
  try {
    const object = decodeObject(buf);
    return { apiVersion: object.apiVersion as string, kind: object.kind as string, object };
  } catch (err) {
    throw asProtobufError(err, 'malformed', 'undecodable protobuf body');
  }
}

/** Encodes a JSON object carrying `apiVersion` and `kind` into envelope bytes. */
export function encodeEnvelope(obj: Record<string, unknown>): Buffer {
  const { apiVersion, kind } = typeOf(obj);
  return writeUnknown(apiVersion, kind, messageBytes(obj, apiVersion, kind));
}

/**
 * A list (`ConfigMapList`, `PartialObjectMetadataList`, …) as the pieces of its
 * envelope: each item's field is encoded once per frozen object, as the JSON
 * list's items are, and not copied here (lib/http/parts.ts joins or streams them).
 */
export function encodeList(apiVersion: string, listKind: string, metadata: object, items: readonly object[]): { parts: Uint8Array[]; length: number } {
  const plan = planForKind(apiVersion, listKind);
  if (!plan) throw new ProtobufError('unknown-kind', `unknown kind "${apiVersion} ${listKind}": no protobuf schema`);
  const meta = plan.byJson.get('metadata')?.field;
  const itemsField = plan.byJson.get('items')?.field;
  if (!meta?.msg || !itemsField) throw new ProtobufError('unknown-kind', `"${apiVersion} ${listKind}" is not a list`);
  const parts: Uint8Array[] = [];
  let length = 0;
  const add = (field: number, raw: Uint8Array) => {
    const key = lenPrefix(field, raw.length);
    parts.push(key, raw);
    length += key.length + raw.length;
  };
  try {
    add(meta.id, meta.msg.type.encode(messageFromJson(meta.msg, metadata, `${listKind}.metadata`)).finish());
    for (const item of items) {
      const b = listItemField(itemsField.id, item as Record<string, unknown>);
      parts.push(b);
      length += b.length;
    }
  } catch (err) {
    throw asProtobufError(err, 'invalid-value', `cannot encode "${apiVersion} ${listKind}"`);
  }
  return unknownParts(apiVersion, listKind, parts, length);
}

/** A watch frame's field numbers, looked up on first use (registry.ts builds the plans then). */
let watchFields: { readonly type: number; readonly object: number; readonly rawExtensionRaw: number } | undefined;
function watchFieldIds(): NonNullable<typeof watchFields> {
  if (watchFields) return watchFields;
  const watchEvent = planFor('meta.WatchEvent');
  watchFields = { type: fieldId(watchEvent, 'type'), object: fieldId(watchEvent, 'object'), rawExtensionRaw: fieldId(planFor('runtime.RawExtension'), 'raw') };
  return watchFields;
}
const LEN = 2; // wire type of length-delimited fields

/**
 * One frame of a `;stream=watch` body: the 4-byte big-endian length, then a
 * metav1.WatchEvent without envelope whose `object.raw` holds the object in
 * its own envelope (apimachinery's stream serializer is the raw one; the
 * embedded object goes through the enveloping one).
 */
export function encodeWatchFrame(type: string, obj: Record<string, unknown>): Buffer {
  const { apiVersion, kind } = typeOf(obj);
  const frozen = Object.isFrozen(obj);
  let raw = frozen ? messageMemo.get(obj) : undefined;
  let rawLength: number;
  if (raw !== undefined) rawLength = raw.length;
  else {
    const plan = planOrThrow(apiVersion, kind);
    rawLength = tryWriter(plan, obj, apiVersion, kind);
    if (rawLength < 0) {
      raw = slowMessage(plan, obj, apiVersion, kind);
      rawLength = raw.length;
      if (frozen) messageMemo.set(obj, raw);
    }
  }
  // The whole frame in one buffer: the message is copied once, from the writer's buffer or the memo.
  const ids = watchFieldIds();
  const tail = unknownTail();
  const typeMeta = typeMetaField(apiVersion, kind);
  const typeLength = Buffer.byteLength(type, 'utf8');
  const envLength = MAGIC.length + typeMeta.length + 1 + varintSize(rawLength) + rawLength + tail.length;
  const objectLength = 1 + varintSize(envLength) + envLength;
  const length = 1 + varintSize(typeLength) + typeLength + 1 + varintSize(objectLength) + objectLength;
  const frame = Buffer.allocUnsafe(4 + length);
  frame.writeUInt32BE(length, 0); // apimachinery's length-delimited framer
  let at = putVarint(frame, 4, (ids.type << 3) | LEN);
  at = putVarint(frame, at, typeLength);
  at += frame.write(type, at, 'utf8');
  at = putVarint(frame, at, (ids.object << 3) | LEN);
  at = putVarint(frame, at, objectLength);
  at = putVarint(frame, at, (ids.rawExtensionRaw << 3) | LEN);
  at = putVarint(frame, at, envLength);
  at += MAGIC.copy(frame, at);
  at += typeMeta.copy(frame, at);
  at = putVarint(frame, at, (rawField() << 3) | LEN);
  at = putVarint(frame, at, rawLength);
  if (raw !== undefined) frame.set(raw, at);
  else {
    copyMessage(frame, at);
    // The frame lives as long as the object's event memo does; a GET of the object reads its message from here.
    if (frozen) messageMemo.set(obj, frame.subarray(at, at + rawLength));
  }
  tail.copy(frame, at + rawLength);
  return frame;
}

function typeOf(obj: Record<string, unknown>): { apiVersion: string; kind: string } {
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    throw new ProtobufError('unknown-kind', 'cannot encode object without string apiVersion and kind');
  }
  return { apiVersion, kind };
}

const messageMemo = new WeakMap<object, Uint8Array>();

/** The message of one object without envelope; stored (frozen) objects are encoded once for every reader. */
function messageBytes(obj: Record<string, unknown>, apiVersion: string, kind: string): Uint8Array {
  const frozen = Object.isFrozen(obj);
  if (frozen) {
    const hit = messageMemo.get(obj);
    if (hit !== undefined) return hit;
  }
  const plan = planOrThrow(apiVersion, kind);
  const n = tryWriter(plan, obj, apiVersion, kind);
  let raw: Uint8Array;
  if (n >= 0) {
    raw = Buffer.allocUnsafe(n);
    copyMessage(raw, 0);
  } else raw = slowMessage(plan, obj, apiVersion, kind);
  if (frozen) messageMemo.set(obj, raw);
  return raw;
}

function planOrThrow(apiVersion: string, kind: string): MessagePlan {
  const plan = planForKind(apiVersion, kind);
  if (!plan) throw new ProtobufError('unknown-kind', `unknown kind "${apiVersion} ${kind}": no protobuf schema`);
  return plan;
}

/** The message written by writer.ts into its buffer (its length), or -1 when the object is not well formed. */
function tryWriter(plan: MessagePlan, obj: Record<string, unknown>, apiVersion: string, kind: string): number {
  try {
    return writeMessage(plan, obj);
  } catch (err) {
    throw asProtobufError(err, 'invalid-value', `cannot encode "${apiVersion} ${kind}"`);
  }
}

/** Through protobufjs's message objects: what throws the error naming the field when the writer gives up. */
function slowMessage(plan: MessagePlan, obj: Record<string, unknown>, apiVersion: string, kind: string): Uint8Array {
  try {
    return plan.type.encode(messageFromJson(plan, obj, kind)).finish();
  } catch (err) {
    throw asProtobufError(err, 'invalid-value', `cannot encode "${apiVersion} ${kind}"`);
  }
}

const itemFieldMemo = new WeakMap<object, { field: number; bytes: Uint8Array }>();

/**
 * An item of a list as its whole field (key, length, message), made once per
 * frozen object as the JSON list's items are (api/json.ts listItemBytes): a
 * list is then its remembered items back to back. Making each item's key and
 * length per list put a protobuf LIST of 500 ConfigMaps at 111% of the JSON
 * one's server CPU (bench/run.ts encodings).
 */
function listItemField(field: number, item: Record<string, unknown>): Uint8Array {
  const frozen = Object.isFrozen(item);
  if (frozen) {
    const hit = itemFieldMemo.get(item);
    if (hit !== undefined && hit.field === field) return hit.bytes;
  }
  const { apiVersion, kind } = typeOf(item);
  const raw = messageBytes(item, apiVersion, kind);
  const key = lenPrefix(field, raw.length);
  const bytes = Buffer.concat([key, raw]);
  if (frozen) {
    itemFieldMemo.set(item, { field, bytes });
    // One copy of the message per object: the GET of the object reads it from the field's bytes.
    messageMemo.set(item, bytes.subarray(key.length));
  }
  return bytes;
}

// Last line of defence: anything protobufjs throws is wrapped, never leaked.
function asProtobufError(err: unknown, code: 'malformed' | 'invalid-value', what: string): ProtobufError {
  if (err instanceof ProtobufError) return err;
  return new ProtobufError(code, `${what}: ${err instanceof Error ? err.message : String(err)}`);
}
