// Reads and decodes request bodies, bounded by the size limit, so a client
// can neither exhaust memory nor get a half-parsed object stored.
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, StatusError, tooLarge } from '../api/status.js';
import { isPlainObject } from '../api/meta.js';
import type { InputFormat } from './negotiate.js';
import { decodeEnvelope, ProtobufError } from '../protobuf/codec.js';
import { decodeCborObject } from '../cbor/decode.js';
import { CborError } from '../cbor/errors.js';

export const DEFAULT_BODY_LIMIT = 3 * 1024 * 1024;

/**
 * The request's body, refused with 413 past `limit` (declared, or as it arrives). An HTTP/1.x body of
 * a declared length is looked for once the socket's read has reached the parser (bodyAtHand); any other
 * body, or one not whole by then, is read by the stream's 'data', 'end' and 'error' listeners.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  // The handler runs at the headers, inside the parse; Node's parser hands each body chunk over in a
  // callback scope of its own, whose end runs this microtask: a body sent with its headers is in the
  // stream's buffer by then. One reaction instead of the Promise's executor, three listeners and a 'data'
  // emit (the read with the stream's ticks: ~39k → ~27k instructions a create, docs/decisions/2026-11-30-create-cpu-cuts-6.md).
  if (declared > 0 && req.httpVersionMajor === 1 && !req.destroyed && req.readableFlowing === null) {
    return PARSED.then(() => bodyAtHand(req, declared) ?? afterParse(req, limit));
  }
  return listened(req, limit);
}

const PARSED = Promise.resolve();

function afterParse(req: IncomingMessage, limit: number): Promise<Buffer> {
  // Destroyed since the handler began: listeners there from the start would have had its error (Node
  // emits a request's 'error' only to the listeners it has when destroyed).
  if (req.destroyed && req.errored) return Promise.reject(req.errored);
  return listened(req, limit);
}

/**
 * The body when the stream's buffer holds all `declared` bytes and nothing has read from it: taken by
 * one read(), then the stream resumed so that it ends (and is done with) as a read one does. undefined
 * otherwise, also for a request destroyed meanwhile (the listeners report that as before).
 */
function bodyAtHand(req: IncomingMessage, declared: number): Buffer | undefined {
  if (req.destroyed || req.readableFlowing !== null || req.readableDidRead || req.readableLength !== declared) return undefined;
  // All of the buffer: `declared` bytes, the stream holding no more (a next request has a stream of its own).
  const body = req.read() as Buffer;
  req.resume();
  return body;
}

/** The body by the stream's listeners: 413 once past `limit`, the stream's error as it is. */
function listened(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) {
        done = true;
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      }
    });
    req.on('error', (err) => {
      if (!done) {
        done = true;
        reject(err);
      }
    });
  });
}

/**
 * A protobuf body as its JSON object. Truncated or corrupt bytes and a wrong
 * prefix are a 400, an encoding inside the envelope we cannot read a 415,
 * each naming the problem; nothing is half-decoded.
 */
export function decodeProtobuf(buf: Buffer): Record<string, unknown> {
  try {
    return decodeEnvelope(buf).object;
  } catch (err) {
    if (!(err instanceof ProtobufError)) throw err;
    if (err.code === 'unsupported-encoding') throw new StatusError(415, 'UnsupportedMediaType', `the protobuf request body cannot be read: ${err.message}`, {});
    throw badRequest(`the request body is not a valid protobuf object: ${err.message}`);
  }
}

/**
 * A CBOR body as its JSON object. Anything the decoder refuses — truncated or
 * corrupt bytes, a duplicate map key, a tag other than 55799, a value JSON
 * cannot hold — is a 400 naming the problem (kube-apiserver's answer to a
 * body it cannot decode); nothing is half-decoded.
 */
export function decodeCbor(buf: Buffer): Record<string, unknown> {
  try {
    return decodeCborObject(buf);
  } catch (err) {
    if (!(err instanceof CborError)) throw err;
    throw badRequest(`the request body is not a valid CBOR object: ${err.message}`);
  }
}

/** Parses a body into a JSON object; anything else is a 400 naming the problem. */
export function decodeObject(buf: Buffer, format: InputFormat): Record<string, unknown> {
  if (buf.length === 0) throw badRequest('the request body is empty: an object is required');
  if (format === 'protobuf') return decodeProtobuf(buf);
  if (format === 'cbor') return decodeCbor(buf);
  const text = buf.toString('utf8');
  let value: unknown;
  try {
    value = format === 'json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n', 1)[0] : String(err);
    throw badRequest(`the request body is not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${why}`);
  }
  if (!isPlainObject(value))
    throw badRequest(`the request body must be an object, not ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'null' : typeof value}`);
  return value;
}
