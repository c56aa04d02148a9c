// The bytes of a stored object's watch event in each encoding, made once per
// object, event type and encoding however many watchers get it: a write
// watched by 1,000 clients serializes its object once per encoding asked for,
// and every watcher's socket is handed the same buffer.
import type { KObject } from '../../lib/api/meta.js';
import { toJson } from '../../lib/api/json.js';
import { encodeWatchFrame } from '../../lib/protobuf/codec.js';
import { encodeCborEvent } from '../../lib/cbor/encode.js';

export type WireType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
export type EventEncoding = 'json' | 'protobuf' | 'cbor';

/**
 * The encoders behind the shared events, one per encoding. A seam: tests wrap
 * an entry to count how often an object is encoded; nothing else replaces them.
 */
export const watchEncoders: Record<EventEncoding, (type: WireType, obj: KObject) => Buffer> = {
  // One UTF-8 encode of the whole line: a string would be re-encoded per socket.
  json: (type, obj) => Buffer.from(`{"type":"${type}","object":${toJson(obj)}}\n`, 'utf8'),
  protobuf: (type, obj) => encodeWatchFrame(type, obj as unknown as Record<string, unknown>),
  cbor: (type, obj) => encodeCborEvent(type, obj),
};

const ADDED_HEAD = Buffer.from('{"type":"ADDED","object":');
const EVENT_TAIL = Buffer.from('}\n');

/**
 * watchEncoders.json's ADDED line of an object kept as its list piece (its JSON and a comma; Store.getPieceNow,
 * ListResult.pieces): the same bytes, made without the object (a watch's initial events from kept bytes).
 */
export function addedJsonOfPiece(piece: Buffer): Buffer {
  const n = piece.length - 1;
  return Buffer.concat([ADDED_HEAD, piece.subarray(0, n), EVENT_TAIL], ADDED_HEAD.length + n + EVENT_TAIL.length);
}

const memos: Record<EventEncoding, WeakMap<object, Partial<Record<WireType, Buffer>>>> = {
  json: new WeakMap(),
  protobuf: new WeakMap(),
  cbor: new WeakMap(),
};

/** The event of a stored (served) object in one encoding; the encoder's errors reach the caller. */
export function sharedEvent(encoding: EventEncoding, type: WireType, obj: KObject): Buffer {
  const memo = memos[encoding];
  let m = memo.get(obj);
  if (m === undefined) {
    m = {};
    memo.set(obj, m);
  }
  let b = m[type];
  if (b === undefined) {
    b = watchEncoders[encoding](type, obj);
    m[type] = b;
  }
  return b;
}
