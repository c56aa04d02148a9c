// The one error a CBOR body can raise, with a closed set of codes that
// lib/http maps to Status: every code is a 400 (kube-apiserver answers a body
// it cannot decode with BadRequest), the message names the problem.

export type CborErrorCode = 'malformed' | 'duplicate-key' | 'unsupported-tag' | 'invalid-value' | 'too-deep' | 'not-an-object';

export class CborError extends Error {
  constructor(
    readonly code: CborErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const CBOR_MEDIA_TYPE = 'application/cbor';
export const CBOR_SEQ_MEDIA_TYPE = 'application/cbor-seq';
export const APPLY_PATCH_CBOR = 'application/apply-patch+cbor';
/** RFC 8949 §3.4.6: tag 55799 in front of a data item says "this is CBOR" and means nothing else. */
export const SELF_DESCRIBED_TAG = 55799;
