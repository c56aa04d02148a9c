// An OpenAPI v3 document in gnostic's protobuf form (openapi.v3.Document), as
// kube-apiserver serves /openapi/v3/<group-version> when asked: the JSON
// document turned into gnostic's message shapes the way openapi_v3.ParseDocument
// reads it (maps become repeated Named* pairs, `x-…` members specification
// extensions, free-form values `Any.yaml` text, `$ref` `_ref`, each `oneof`
// chosen from the member's content). A member or value gnostic's parser
// refuses throws, so a document is never served with data silently dropped,
// save the one loss gnostic itself makes: a schema `default` that is not a
// scalar (kube's `default: {}`) becomes an empty DefaultType, as in kube's bytes.
import protobuf from 'protobufjs/light.js';
import { stringify as toYaml } from 'yaml';
import { ONEOFS, openapiV3 } from './gnostic-v3.js';
import { gnosticRoot } from './gnostic-root.js';

type Json = Record<string, unknown>;

// Built on first use, not at load: the gnostic Root costs ~100-170 ms of a start's CPU (bench/startup.ts)
// and is read only when a client asks for the OpenAPI document as protobuf.
let root: protobuf.Root | undefined;

/** The protobufjs type of an openapi.v3 message. */
export function gnosticV3Type(name: string): protobuf.Type {
  return (root ??= gnosticRoot(openapiV3, ONEOFS)).lookupType(`openapi.v3.${name}`);
}

let document: protobuf.Type | undefined;
const documentType = (): protobuf.Type => (document ??= gnosticV3Type('Document'));

class GnosticError extends Error {}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isExtension = (k: string) => k.startsWith('x-');
const REFERENCE_KEYS = new Set(['$ref', 'summary', 'description']);

/** The field a JSON member names (`$ref` is `_ref`); own fields only, so `constructor` or `__proto__` is no field. */
function fieldOf(type: protobuf.Type, k: string): protobuf.Field | undefined {
  const name = k === '$ref' ? '_ref' : k === '_ref' ? '' : k;
  return Object.hasOwn(type.fields, name) ? type.fields[name] : undefined;
}

/**
 * Which member of a `oneof oneof` a JSON value is. gnostic tries each member in
 * field order and keeps the last that parses: a Reference (`$ref` with at most
 * a summary and description) wins over the other member, a map is an
 * Expression rather than an Any, a boolean is the boolean of an
 * AdditionalPropertiesItem.
 */
function oneofMember(type: protobuf.Type, v: unknown): string | undefined {
  const [first, second] = type.fieldsArray;
  if (type.name === 'AdditionalPropertiesItem') return typeof v === 'boolean' ? 'boolean' : isObject(v) ? 'schemaOrReference' : undefined;
  if (!isObject(v)) return undefined;
  if (second?.name === 'reference') return Object.hasOwn(v, '$ref') && Object.keys(v).every((k) => REFERENCE_KEYS.has(k)) ? 'reference' : first!.name;
  if (type.name === 'AnyOrExpression') return 'expression';
  return undefined;
}

/** gnostic's DefaultType holds a scalar only; anything else parses to an empty one (no member set). */
function defaultType(v: unknown): Json {
  if (typeof v === 'boolean') return { boolean: v };
  if (typeof v === 'string') return { string: v };
  if (typeof v === 'number') return { number: v };
  return {};
}

/** Scalars as gnostic's parser takes them: `!!str` for strings, `!!bool`, `!!int` for int64, `!!int`/`!!float` for double. */
function scalar(field: protobuf.Field, v: unknown, at: string): unknown {
  const ok =
    field.type === 'string'
      ? typeof v === 'string'
      : field.type === 'bool'
        ? typeof v === 'boolean'
        : field.type === 'int64'
          ? Number.isInteger(v)
          : field.type === 'double'
            ? typeof v === 'number'
            : false;
  if (!ok) throw new GnosticError(`${at}: expected a ${field.type}`);
  return v;
}

function value(field: protobuf.Field, v: unknown, at: string): unknown {
  const t = field.resolvedType;
  const one = (item: unknown, where: string) => (t instanceof protobuf.Type ? message(t, item, where) : scalar(field, item, where));
  if (!field.repeated) return one(v, at);
  if (!Array.isArray(v)) throw new GnosticError(`${at}: expected an array`);
  return v.map((item, i) => one(item, `${at}[${i}]`));
}

/** `{name, value}` pairs of a Named* field, one per member of `obj` that `keep` selects. */
function pairs(field: protobuf.Field, obj: Json, at: string, keep: (k: string) => boolean): Json[] {
  const valueField = (field.resolvedType as protobuf.Type).fields['value']!;
  return Object.keys(obj)
    .filter(keep)
    .map((k) => ({ name: k, value: value(valueField, obj[k], `${at}.${k}`) }));
}

/** Members of maps whose keys gnostic sorts by pattern: PathItems under `/`, responses by status code. */
const PATTERNED: Record<string, { field: string; key: RegExp }> = {
  Paths: { field: 'path', key: /^\// },
  Responses: { field: 'responseOrReference', key: /^[0-9X]{3}$/ },
  Callback: { field: 'path', key: /^/ },
};

function message(type: protobuf.Type, v: unknown, at: string): Json {
  switch (type.name) {
    case 'Any':
      return { yaml: toYaml(v, { lineWidth: 0 }) };
    case 'DefaultType':
      return defaultType(v);
    case 'StringArray':
      return { value: value(type.fields['value']!, v, at) };
    case 'ItemsItem':
      if (!isObject(v)) throw new GnosticError(`${at}: expected one schema for items`);
      return { schemaOrReference: [message(gnosticV3Type('SchemaOrReference'), v, at)] };
  }
  if (type.oneofsArray.length > 0) {
    const member = oneofMember(type, v);
    if (!member) throw new GnosticError(`${at}: not a valid ${type.name}`);
    return { [member]: value(type.fields[member]!, v, at) };
  }
  if (!isObject(v)) throw new GnosticError(`${at}: expected an object for ${type.name}`);
  const ext = type.fields['specificationExtension'];
  const out: Json = {};
  // A JSON object of named entries only (schemas, properties, media types, …): every member, `x-…` too.
  const entries = type.fields['additionalProperties'];
  if (entries?.repeated) {
    out['additionalProperties'] = pairs(entries, v, at, () => true);
    return out;
  }
  const patterned = PATTERNED[type.name];
  if (patterned) out[patterned.field] = pairs(type.fields[patterned.field]!, v, at, (k) => patterned.key.test(k));
  const extensions: Json[] = [];
  for (const k of Object.keys(v)) {
    if (isExtension(k) && ext) {
      extensions.push({ name: k, value: { yaml: toYaml(v[k], { lineWidth: 0 }) } });
      continue;
    }
    if (patterned?.key.test(k)) continue;
    const field = fieldOf(type, k);
    if (!field || field === ext || field.name === patterned?.field) throw new GnosticError(`${at}: ${type.name} has no member "${k}"`);
    out[field.name] = value(field, v[k], `${at}.${k}`);
  }
  if (extensions.length > 0) out['specificationExtension'] = extensions;
  return out;
}

/** The gnostic message object of an OpenAPI v3 document (plain object, protobufjs field names). */
export function toGnosticV3(doc: Json): Json {
  return message(documentType(), doc, '$');
}

/** The protobuf bytes of an OpenAPI v3 document; throws when gnostic's parser would refuse a member or value. */
export function encodeOpenApiV3(doc: Json): Buffer {
  const DOCUMENT = documentType();
  const bytes = DOCUMENT.encode(DOCUMENT.fromObject(toGnosticV3(doc))).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
