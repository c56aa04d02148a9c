// The k8s\0 prefix and runtime.Unknown wrapper around every protobuf body.
import { ProtobufError } from './errors.js';
import { fieldId, planFor, type MessagePlan } from './registry.js';
import { lenPrefix } from './wire.js';

export const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** The plans' facts this file reads, looked up on first use (registry.ts builds the plans then). */
interface EnvelopeFacts {
  readonly unknownPlan: MessagePlan;
  readonly typeMetaType: MessagePlan['type'];
  /** contentEncoding and contentType, empty: the Go serializer writes them so. */
  readonly tail: Buffer;
  readonly rawField: number;
}
let facts: EnvelopeFacts | undefined;
function envelopeFacts(): EnvelopeFacts {
  if (facts) return facts;
  const unknownPlan = planFor('runtime.Unknown');
  facts = {
    unknownPlan,
    typeMetaType: planFor('runtime.TypeMeta').type,
    tail: Buffer.concat([lenPrefix(fieldId(unknownPlan, 'contentEncoding'), 0), lenPrefix(fieldId(unknownPlan, 'contentType'), 0)]),
    rawField: fieldId(unknownPlan, 'raw'),
  };
  return facts;
}
export const unknownTail = (): Buffer => envelopeFacts().tail;
export const rawField = (): number => envelopeFacts().rawField;

export interface Unknown {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentType: string;
}

export const hasMagic = (buf: Uint8Array) => buf.length >= 4 && buf[0] === 0x6b && buf[1] === 0x38 && buf[2] === 0x73 && buf[3] === 0x00;

export function readUnknown(buf: Uint8Array): Unknown {
  if (!hasMagic(buf)) {
    const got = Buffer.from(buf.subarray(0, 4)).toString('hex');
    throw new ProtobufError('bad-magic', `invalid protobuf envelope: expected prefix 6b387300, got "${got}"`);
  }
  let u: Record<string, unknown>;
  try {
    u = envelopeFacts().unknownPlan.type.decode(buf.subarray(4)) as unknown as Record<string, unknown>;
  } catch (err) {
    throw new ProtobufError('malformed', `truncated or malformed protobuf envelope: ${(err as Error).message}`);
  }
  const tm = (u.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const encoding = typeof u.contentEncoding === 'string' ? u.contentEncoding : '';
  if (encoding !== '') {
    throw new ProtobufError('unsupported-encoding', `contentEncoding "${encoding}" not supported`);
  }
  return {
    apiVersion: tm.apiVersion ?? '',
    kind: tm.kind ?? '',
    raw: (u.raw as Uint8Array | undefined) ?? new Uint8Array(0),
    contentType: typeof u.contentType === 'string' ? u.contentType : '',
  };
}

const typeMetaFields = new Map<string, Buffer>();

/** Field 1 of Unknown for one apiVersion/kind, encoded once (responses carry a handful of kinds). */
export function typeMetaField(apiVersion: string, kind: string): Buffer {
  const key = `${apiVersion}\u0000${kind}`;
  let b = typeMetaFields.get(key);
  if (b === undefined) {
    const { typeMetaType, unknownPlan } = envelopeFacts();
    const tm = typeMetaType.encode({ apiVersion, kind }).finish();
    b = Buffer.concat([lenPrefix(fieldId(unknownPlan, 'typeMeta'), tm.length), tm]);
    if (typeMetaFields.size >= 1024) typeMetaFields.clear();
    typeMetaFields.set(key, b);
  }
  return b;
}

/** The envelope around `raw` as the pieces it is made of (a list's items are not copied into one buffer first). */
export function unknownParts(apiVersion: string, kind: string, raw: readonly Uint8Array[], rawLength: number): { parts: Uint8Array[]; length: number } {
  const { rawField, tail } = envelopeFacts();
  const head = [MAGIC, typeMetaField(apiVersion, kind), lenPrefix(rawField, rawLength)];
  const length = head.reduce((n, b) => n + b.length, 0) + rawLength + tail.length;
  return { parts: [...head, ...raw, tail], length };
}

export function writeUnknown(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const { rawField, tail } = envelopeFacts();
  return Buffer.concat([MAGIC, typeMetaField(apiVersion, kind), lenPrefix(rawField, raw.length), raw, tail]);
}
