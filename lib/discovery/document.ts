// A discovery document as the HTTP layer serves it: serialized once, with a
// strong ETag, so that answering (including 304s) costs no JSON work per request.
import { createHash } from 'node:crypto';
import { goJson } from '../api/json.js';

export interface Document {
  /** The JSON text of the response body. */
  readonly body: string;
  /** A quoted strong ETag over the body, ready for the ETag header and If-None-Match comparison. */
  readonly etag: string;
  /** The Content-Type to answer with (aggregated discovery names its kind in parameters). */
  readonly contentType: string;
}

export const JSON_TYPE = 'application/json';

/**
 * How kube writes a document: `encoded` through its API encoder (discovery
 * objects: HTML-safe escaped, ending in "\n"); `indented` by its raw JSON
 * writer (/version, the root paths: two-space indent, no final newline);
 * `raw` as JSON.stringify writes it (OpenAPI, whose bytes and hashes are kept).
 */
export type DocumentForm = 'encoded' | 'indented' | 'raw';

export function makeDocument(value: unknown, contentType = JSON_TYPE, form: DocumentForm = 'raw'): Document {
  const body = form === 'encoded' ? goJson(value) + '\n' : form === 'indented' ? goJson(value, 2) : JSON.stringify(value);
  const etag = `"${createHash('sha256').update(body).digest('hex')}"`;
  return Object.freeze({ body, etag, contentType });
}
