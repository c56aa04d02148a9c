// Public API: Kubernetes protobuf bodies ⇄ the JSON objects the server stores.
import { ProtobufError } from './errors.js';
import { writeUnknown } from './envelope.js';
import { messageFromJson } from './from-json.js';
import { planForKind } from './registry.js';
import { decodeObject } from './to-json.js';

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
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    throw new ProtobufError('unknown-kind', 'cannot encode object without string apiVersion and kind');
  }
  const plan = planForKind(apiVersion, kind);
  if (!plan) throw new ProtobufError('unknown-kind', `unknown kind "${apiVersion} ${kind}": no protobuf schema`);
  try {
    const raw = plan.type.encode(messageFromJson(plan, obj, kind)).finish();
    return writeUnknown(apiVersion, kind, raw);
  } catch (err) {
    throw asProtobufError(err, 'invalid-value', `cannot encode "${apiVersion} ${kind}"`);
  }
}

// Last line of defence: anything protobufjs throws is wrapped, never leaked.
function asProtobufError(err: unknown, code: 'malformed' | 'invalid-value', what: string): ProtobufError {
  if (err instanceof ProtobufError) return err;
  return new ProtobufError(code, `${what}: ${err instanceof Error ? err.message : String(err)}`);
}
