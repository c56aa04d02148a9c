// An independent reader and writer of Kubernetes protobuf for the tests: a
// small .proto written from kubernetes/api and apimachinery's generated.proto
// (field numbers checked by hand against them), parsed by protobufjs. It
// shares nothing with lib/protobuf, so a wrong field number there shows here.
import protobuf from 'protobufjs';

const PROTO = `
syntax = "proto2";
package k8s;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message RawExtension { optional bytes raw = 1; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message FieldsV1 { optional bytes Raw = 1; }
message ManagedFieldsEntry { optional string manager = 1; optional string operation = 2; optional string apiVersion = 3; optional Time time = 4; optional string fieldsType = 6; optional FieldsV1 fieldsV1 = 7; optional string subresource = 8; }
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string selfLink = 4;
  optional string uid = 5; optional string resourceVersion = 6; optional int64 generation = 7; optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9; optional int64 deletionGracePeriodSeconds = 10; map<string, string> labels = 11;
  map<string, string> annotations = 12; repeated string finalizers = 14; repeated ManagedFieldsEntry managedFields = 17;
}
message ListMeta { optional string selfLink = 1; optional string resourceVersion = 2; optional string continue = 3; optional int64 remainingItemCount = 4; }
message StatusCause { optional string reason = 1; optional string message = 2; optional string field = 3; }
message StatusDetails { optional string name = 1; optional string group = 2; optional string kind = 3; repeated StatusCause causes = 4; optional int32 retryAfterSeconds = 5; optional string uid = 6; }
message Status { optional ListMeta metadata = 1; optional string status = 2; optional string message = 3; optional string reason = 4; optional StatusDetails details = 5; optional int32 code = 6; }
message WatchEvent { optional string type = 1; optional RawExtension object = 2; }
message PartialObjectMetadata { optional ObjectMeta metadata = 1; }
message PartialObjectMetadataList { optional ListMeta metadata = 1; repeated PartialObjectMetadata items = 2; }
message ConfigMap { optional ObjectMeta metadata = 1; map<string, string> data = 2; map<string, bytes> binaryData = 3; optional bool immutable = 4; }
message ConfigMapList { optional ListMeta metadata = 1; repeated ConfigMap items = 2; }
message Secret { optional ObjectMeta metadata = 1; map<string, bytes> data = 2; optional string type = 3; map<string, string> stringData = 4; optional bool immutable = 5; }
message SecretList { optional ListMeta metadata = 1; repeated Secret items = 2; }
message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceStatus { optional string phase = 1; }
message Namespace { optional ObjectMeta metadata = 1; optional NamespaceSpec spec = 2; optional NamespaceStatus status = 3; }
message NamespaceList { optional ListMeta metadata = 1; repeated Namespace items = 2; }
message PolicyRule { repeated string verbs = 1; repeated string apiGroups = 2; repeated string resources = 3; repeated string resourceNames = 4; repeated string nonResourceURLs = 5; }
message Role { optional ObjectMeta metadata = 1; repeated PolicyRule rules = 2; }
message RoleList { optional ListMeta metadata = 1; repeated Role items = 2; }
message ExtraValue { repeated string items = 1; }
message UserInfo { optional string username = 1; optional string uid = 2; repeated string groups = 3; map<string, ExtraValue> extra = 4; }
message TokenReviewSpec { optional string token = 1; repeated string audiences = 2; }
message TokenReviewStatus { optional bool authenticated = 1; optional UserInfo user = 2; optional string error = 3; repeated string audiences = 4; }
message TokenReview { optional ObjectMeta metadata = 1; optional TokenReviewSpec spec = 2; optional TokenReviewStatus status = 3; }
message SelfSubjectReviewStatus { optional UserInfo userInfo = 1; }
message SelfSubjectReview { optional ObjectMeta metadata = 1; optional SelfSubjectReviewStatus status = 2; }
message ResourceAttributes { optional string namespace = 1; optional string verb = 2; optional string group = 3; optional string version = 4; optional string resource = 5; optional string subresource = 6; optional string name = 7; }
message SubjectAccessReviewSpec { optional ResourceAttributes resourceAttributes = 1; optional string user = 3; repeated string groups = 4; optional string uid = 6; }
message SubjectAccessReviewStatus { optional bool allowed = 1; optional string reason = 2; optional string evaluationError = 3; optional bool denied = 4; }
message SubjectAccessReview { optional ObjectMeta metadata = 1; optional SubjectAccessReviewSpec spec = 2; optional SubjectAccessReviewStatus status = 3; }
`;

const root = protobuf.parse(PROTO, { keepCase: true }).root;
export const K8S = (name: string) => root.lookupType(`k8s.${name}`);
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Envelope bytes → { apiVersion, kind, message } with the message decoded as `type`. */
export function unwrap(buf: Uint8Array, type?: string): { apiVersion: string; kind: string; object: Json } {
  if (!MAGIC.equals(Buffer.from(buf.subarray(0, 4)))) throw new Error(`no k8s\\0 prefix: ${Buffer.from(buf.subarray(0, 8)).toString('hex')}`);
  const u = K8S('Unknown').decode(buf.subarray(4)) as Json;
  const kind = u.typeMeta.kind as string;
  const object = plain(K8S(type ?? kind).decode(u.raw));
  return { apiVersion: u.typeMeta.apiVersion, kind, object };
}

/** A JSON object → envelope bytes, encoded as message `kind`. */
export function wrap(apiVersion: string, kind: string, message: Json): Buffer {
  const raw = K8S(kind).encode(K8S(kind).fromObject(message)).finish();
  return Buffer.concat([MAGIC, K8S('Unknown').encode({ typeMeta: { apiVersion, kind }, raw }).finish()]);
}

// Decoded message → the Kubernetes JSON of the fields the tests compare: times
// as RFC 3339, FieldsV1 as its JSON, int64 as numbers, bytes as base64.
function plain(m: protobuf.Message): Json {
  const o = (m.constructor as typeof protobuf.Message).toObject(m, { longs: Number, bytes: String });
  return fix(o);
}

function fix(v: Json, key = ''): Json {
  if (Array.isArray(v)) return v.map((x) => fix(x, key));
  if (v === null || typeof v !== 'object') return v;
  if (key === 'creationTimestamp' || key === 'time' || key === 'deletionTimestamp') {
    return new Date(Number(v.seconds ?? 0) * 1000).toISOString().replace('.000Z', 'Z');
  }
  if (key === 'fieldsV1') return JSON.parse(Buffer.from(v.Raw ?? '', 'base64').toString('utf8'));
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) out[k] = fix(x, k);
  return out;
}

/** Splits a `;stream=watch` body into WatchEvents, fed in chunks of any size. */
export class FrameReader {
  private buf = Buffer.alloc(0);
  readonly events: Array<{ type: string; kind: string; object: Json }> = [];
  push(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= 4) {
      const len = this.buf.readUInt32BE(0);
      if (this.buf.length < 4 + len) return;
      const frame = this.buf.subarray(4, 4 + len);
      this.buf = this.buf.subarray(4 + len);
      const ev = K8S('WatchEvent').decode(frame) as Json;
      const inner = unwrap(ev.object.raw);
      this.events.push({ type: ev.type, kind: inner.kind, object: inner.object });
    }
  }
  get pending(): number {
    return this.buf.length;
  }
}
