// The one error type this folder throws. Callers map it to a 400/415 (decode) or
// fall back to JSON (encode); a raw protobufjs exception never escapes.
export type ProtobufErrorCode =
  | 'bad-magic' // body does not start with the k8s\0 prefix
  | 'malformed' // truncated or otherwise undecodable wire data
  | 'unknown-kind' // apiVersion/kind has no schema here
  | 'unsupported-encoding' // contentEncoding/contentType we cannot read
  | 'invalid-value'; // a JSON value does not fit the schema (encode) or a wrapped payload is not JSON

export class ProtobufError extends Error {
  override readonly name = 'ProtobufError';
  constructor(
    readonly code: ProtobufErrorCode,
    message: string,
  ) {
    super(message);
  }
}
