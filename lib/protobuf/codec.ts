// Public API: Kubernetes protobuf bodies ⇄ the JSON objects the server stores.
import { ProtobufError } from './errors.js';
import { unknownParts, writeUnknown } from './envelope.js';
import { messageFromJson } from './from-json.js';
import { fieldId, planFor, planForKind } from './registry.js';
import { decodeObject } from './to-json.js';
import { frameHeader, lenPrefix } from './wire.js';

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

const watchEvent = planFor('meta.WatchEvent');
const WATCH_TYPE = fieldId(watchEvent, 'type');
const WATCH_OBJECT = fieldId(watchEvent, 'object');
const RAW_EXTENSION_RAW = fieldId(planFor('runtime.RawExtension'), 'raw');

/**
 * One frame of a `;stream=watch` body: the 4-byte big-endian length, then a
 * metav1.WatchEvent without envelope whose `object.raw` holds the object in
 * its own envelope (apimachinery's stream serializer is the raw one; the
 * embedded object goes through the enveloping one).
 */
export function encodeWatchFrame(type: string, obj: Record<string, unknown>): Buffer {
  const { apiVersion, kind } = typeOf(obj);
  const raw = messageBytes(obj, apiVersion, kind);
  // The envelope's pieces go straight into the frame: the message is copied once, not into an envelope first.
  const env = unknownParts(apiVersion, kind, [raw], raw.length);
  const typeBytes = Buffer.from(type, 'utf8');
  const rawKey = lenPrefix(RAW_EXTENSION_RAW, env.length);
  const head = [lenPrefix(WATCH_TYPE, typeBytes.length), typeBytes, lenPrefix(WATCH_OBJECT, rawKey.length + env.length), rawKey];
  const length = head.reduce((n, p) => n + p.length, env.length);
  return Buffer.concat([frameHeader(length), ...head, ...env.parts], 4 + length);
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
  const plan = planForKind(apiVersion, kind);
  if (!plan) throw new ProtobufError('unknown-kind', `unknown kind "${apiVersion} ${kind}": no protobuf schema`);
  let raw: Uint8Array;
  try {
    raw = plan.type.encode(messageFromJson(plan, obj, kind)).finish();
  } catch (err) {
    throw asProtobufError(err, 'invalid-value', `cannot encode "${apiVersion} ${kind}"`);
  }
  if (frozen) messageMemo.set(obj, raw);
  return raw;
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
