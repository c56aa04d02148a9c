// A discovery document as the HTTP layer serves it: serialized once, with a
// strong ETag, so that answering (including 304s) costs no JSON work per request.
import { createHash } from 'node:crypto';

export interface Document {
  /** The JSON text of the response body. */
  readonly body: string;
  /** A quoted strong ETag over the body, ready for the ETag header and If-None-Match comparison. */
  readonly etag: string;
  /** The Content-Type to answer with (aggregated discovery names its kind in parameters). */
  readonly contentType: string;
}

export const JSON_TYPE = 'application/json';

export function makeDocument(value: unknown, contentType = JSON_TYPE): Document {
  const body = JSON.stringify(value);
  const etag = `"${createHash('sha256').update(body).digest('hex')}"`;
  return Object.freeze({ body, etag, contentType });
}
