// Writes responses: objects in the negotiated encoding, gzip when asked,
// and Status errors. Handlers never set status codes for failures by hand.
import type { IncomingMessage } from 'node:http';
import { gzip, gzipSync } from 'node:zlib';
import { stringify as toYaml } from 'yaml';
import { internalError, StatusError } from '../api/status.js';
import { encodeEnvelope, PROTOBUF_MEDIA_TYPE, ProtobufError } from '../protobuf/codec.js';
import type { Output } from './negotiate.js';
import { encodeCbor } from '../cbor/encode.js';
import { CBOR_MEDIA_TYPE } from '../cbor/errors.js';
import { endThisTurn } from './turnend.js';
import type { HeadArg } from './carried.js';
import { closeAfterAnswer } from './linger.js';
import { goJson, jsonAnswerBytes, jsonAnswerText } from '../api/json.js';
import { queryBool } from '../api/querybool.js';
import type { Exchange } from './exchange.js';

/** Below this, gzip costs more CPU than the bytes it saves (kube-apiserver's own threshold is 128 KiB). */
export const GZIP_MIN_BYTES = 1024;
const GZIP_SYNC_MAX = 64 * 1024;

/** Whether this request's answer may be (`compress`: the APIResponseCompression gate) and is asked to be gzipped. */
export function wantsGzip(x: Exchange): boolean {
  if (!x.compress) return false;
  const ae = x.req.headers['accept-encoding'];
  return typeof ae === 'string' && ae.includes('gzip');
}

/** Sends a complete body; compresses GET responses when the client asked for gzip. */
export function sendBody(x: Exchange, code: number, contentType: string, body: string | Buffer, headers?: Record<string, string>): void {
  const { req, res } = x;
  if (res.headersSent || res.destroyed) return;
  if (req.method === 'GET' && body.length >= GZIP_MIN_BYTES && wantsGzip(x)) {
    const h: Record<string, string | number> = { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', ...headers };
    h['Content-Encoding'] = 'gzip';
    h['Vary'] = h['Vary'] ? `${h['Vary']}, Accept-Encoding` : 'Accept-Encoding';
    const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    if (raw.length <= GZIP_SYNC_MAX) {
      const zipped = gzipSync(raw, { level: 4 });
      h['Content-Length'] = zipped.length;
      endThisTurn(x, code, h, zipped);
      return;
    }
    gzip(raw, { level: 4 }, (err, zipped) => {
      if (res.destroyed) return;
      if (err) {
        res.destroy(err);
        return;
      }
      h['Content-Length'] = zipped.length;
      endThisTurn(x, code, h, zipped);
    });
    return;
  }
  if (typeof body === 'string' && body.length < ENCODE_ONCE_MIN) {
    // Small: Node sends headers and a string body in one write.
    endThisTurn(x, code, headOf(contentType, headers, Buffer.byteLength(body)), req.method === 'HEAD' ? undefined : body);
    return;
  }
  // Large (lists): encode once. byteLength and then end(string) would each
  // flatten and walk the whole (often concatenated) string.
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  endThisTurn(x, code, headOf(contentType, headers, raw.length), req.method === 'HEAD' ? undefined : raw);
}

/**
 * An answer's head: Content-Type, Cache-Control, the caller's headers, Content-Length, in that order. Without
 * headers of the caller's (a GET's answer) as Node's flat [name, value, …] list: no object grown by a
 * property per header (the length, then the carried Audit-Id and APF's two) and no for-in with an own-property
 * check per header in Node's writeHead; the same bytes on the wire.
 */
function headOf(contentType: string, headers: Record<string, string> | undefined, length: number): HeadArg {
  if (headers === undefined) return ['Content-Type', contentType, 'Cache-Control', 'no-cache, private', 'Content-Length', String(length)];
  return { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', ...headers, 'Content-Length': length };
}

/** Sends a body the caller gzipped already (for a request wantsGzip said yes to). */
export function sendGzipped(x: Exchange, code: number, contentType: string, zipped: Buffer): void {
  if (x.res.headersSent || x.res.destroyed) return;
  const h = {
    'Content-Type': contentType,
    'Cache-Control': 'no-cache, private',
    'Content-Encoding': 'gzip',
    Vary: 'Accept-Encoding',
    'Content-Length': zipped.length,
  };
  endThisTurn(x, code, h, zipped);
}

/** Bodies at least this long are encoded to bytes once before sending. */
const ENCODE_ONCE_MIN = 16 * 1024;

/** Clients that read output themselves get it indented, as kube-apiserver does for curl and browsers. */
export function wantsPretty(req: IncomingMessage, query: URLSearchParams): boolean {
  const p = queryBool(query, 'pretty');
  if (p !== undefined) return p;
  const ua = req.headers['user-agent'];
  return typeof ua === 'string' && (ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/'));
}

export function encode(value: object, output: Output, pretty: boolean): string | Buffer {
  if (output.format === 'protobuf') return protobufBody(() => encodeEnvelope(value as Record<string, unknown>));
  if (output.format === 'cbor') return encodeCbor(value);
  if (output.format === 'yaml') return toYaml(value, { lineWidth: 0 });
  return pretty ? prettyJson(value) : jsonAnswer(value);
}

/** kube's pretty form (json.MarshalIndent): indented by two spaces, HTML-safe escaped, without the encoder's final newline. */
export function prettyJson(value: unknown): string {
  return goJson(value, 2);
}

/**
 * An object's JSON answer as kube's encoder writes it (ending in "\n"):
 * jsonAnswerText's string, or for a large frozen object (as stores hand them
 * out) the UTF-8 bytes kept for it (jsonAnswerBytes). Encoding a large answer per request made a fresh Buffer
 * outside V8's heap each time, and V8 then collected for external memory
 * pressure (see lib/http/parts.ts).
 */
function jsonAnswer(value: object): string | Buffer {
  const s = jsonAnswerText(value);
  return s.length < ENCODE_ONCE_MIN || !Object.isFrozen(value) ? s : jsonAnswerBytes(value);
}

/**
 * A protobuf body. Negotiation offers protobuf only for objects that have a
 * schema, so a failure here is a stored value the schema cannot hold: a 500
 * naming it, never a half-written body.
 */
export function protobufBody<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ProtobufError) throw internalError(`cannot encode the response as protobuf: ${err.message}`);
    throw err;
  }
}

export function sendObject(x: Exchange, code: number, value: object, output: Output, pretty = false, headers?: Record<string, string>): void {
  sendBody(x, code, output.contentType, encode(value, output, pretty), headers);
}

/** Writes a Status error. A 413 also closes the connection, since the rest of the body was not read. */
export function sendError(x: Exchange, err: StatusError, output?: Output): void {
  const { req, res } = x;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err.unrouted) x.unrouted = true;
  const headers = { ...err.headers };
  // HTTP/1.1: the body is left unread, so the connection closes, lingering so the 413 is not
  // lost to a reset. HTTP/2 has no Connection header (setting one throws); the stream ends alone.
  if (err.code === 413 && req.httpVersionMajor === 1) closeAfterAnswer(req, res);
  if (output?.format === 'cbor') {
    sendBody(x, err.code, CBOR_MEDIA_TYPE, encodeCbor(err.status), headers);
    return;
  }
  // Status has a protobuf form in every group version, as kube registers it;
  // one the schema cannot hold still goes out, as JSON.
  if (output?.format === 'protobuf') {
    let body: Buffer | undefined;
    try {
      body = encodeEnvelope(err.status as unknown as Record<string, unknown>);
    } catch {
      body = undefined;
    }
    if (body) {
      sendBody(x, err.code, PROTOBUF_MEDIA_TYPE, body, headers);
      return;
    }
  }
  const body = output?.format === 'yaml' ? toYaml(err.status) : errorJson(err);
  sendBody(x, err.code, output?.format === 'yaml' ? 'application/yaml' : 'application/json', body, headers);
}

/**
 * A Status error's JSON as kube writes it: the encoder's form ending in "\n";
 * a 406 (no acceptable media type, so no serializer) as kube's raw JSON
 * writer does, indented and without the newline.
 */
function errorJson(err: StatusError): string {
  return err.code === 406 ? goJson(err.status, 2) : jsonAnswerText(err.status);
}
