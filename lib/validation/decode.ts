// Request bodies to JSON objects, with the duplicate keys each held (JSON and
// YAML; protobuf cannot repeat a field, CBOR refuses a repeated key). Errors are 400s naming the problem.
import { badRequest } from '../api/status.js';
import { isPlainObject } from '../api/meta.js';
import { decodeCbor, decodeProtobuf } from '../http/body.js';
import type { InputFormat } from '../http/negotiate.js';
import { decodeJson, JsonBodyError, MAX_DEPTH, type DecodedJson } from './json.js';
import { decodeYaml } from './yaml.js';

export interface DecodedBody {
  readonly value: Record<string, unknown>;
  readonly duplicates: readonly string[];
}

/**
 * A YAML body that is plain JSON (kubectl sends apply bodies as JSON) parses
 * to the same value with the JSON decoder at a fraction of the cost. Anything
 * else — not JSON, too deep, or with duplicate keys — goes to the YAML
 * decoder, so its errors and duplicate reports are exactly the YAML ones.
 */
function jsonShapedYaml(text: string, maxDepth: number): DecodedJson | undefined {
  if (!/^\s*\{/.test(text)) return undefined;
  try {
    const d = decodeJson(text, maxDepth);
    return d.duplicates.length === 0 ? d : undefined;
  } catch (err) {
    if (err instanceof JsonBodyError) return undefined; // the YAML decoder reports it in its own words
    throw err;
  }
}

/** Any JSON value of a JSON or YAML text; 400 for syntax or depth. */
export function decodeValue(text: string, format: 'json' | 'yaml', maxDepth = MAX_DEPTH): DecodedJson {
  try {
    if (format === 'json') return decodeJson(text, maxDepth);
    return jsonShapedYaml(text, maxDepth) ?? decodeYaml(text, maxDepth);
  } catch (err) {
    if (err instanceof JsonBodyError) {
      if (err.code === 'depth') throw badRequest(`the request body is too deeply nested: ${err.message}`);
      throw badRequest(`the request body is not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${err.message}`);
    }
    throw err;
  }
}

/** An object body (create, update); anything but an object is a 400. */
export function decodeBody(buf: Buffer, format: InputFormat): DecodedBody {
  if (buf.length === 0) throw badRequest('the request body is empty: an object is required');
  if (format === 'protobuf') return { value: decodeProtobuf(buf), duplicates: [] };
  // CBOR refuses duplicate keys outright (a map holding one is invalid CBOR), so none are left to report.
  if (format === 'cbor') return { value: decodeCbor(buf), duplicates: [] };
  const { value, duplicates } = decodeValue(buf.toString('utf8'), format);
  if (!isPlainObject(value))
    throw badRequest(`the request body must be an object, not ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'null' : typeof value}`);
  return { value, duplicates };
}
