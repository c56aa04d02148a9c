// The k8s\0 prefix and runtime.Unknown wrapper around every protobuf body.
import { ProtobufError } from './errors.js';
import { planFor } from './registry.js';

export const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

const unknownType = planFor('runtime.Unknown').type;

export interface Unknown {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentType: string;
}

export const hasMagic = (buf: Uint8Array) =>
  buf.length >= 4 && buf[0] === 0x6b && buf[1] === 0x38 && buf[2] === 0x73 && buf[3] === 0x00;

export function readUnknown(buf: Uint8Array): Unknown {
  if (!hasMagic(buf)) {
    const got = Buffer.from(buf.subarray(0, 4)).toString('hex');
    throw new ProtobufError('bad-magic', `invalid protobuf envelope: expected prefix 6b387300, got "${got}"`);
  }
  let u: Record<string, unknown>;
  try {
    u = unknownType.decode(buf.subarray(4)) as unknown as Record<string, unknown>;
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

export function writeUnknown(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  // Same fields the Go serializer writes, including the empty encoding/type strings.
  const body = unknownType.encode({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' }).finish();
  return Buffer.concat([MAGIC, body]);
}
