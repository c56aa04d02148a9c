// The Swagger 2.0 document in gnostic's protobuf form (openapi.v2.Document),
// as kube-apiserver serves /openapi/v2 to client-go: the same document as
// the JSON form, turned into gnostic's message shapes the way gnostic's
// parser reads JSON (maps become repeated Named* pairs, `x-…` members become
// vendor extensions, free-form values become `Any.yaml` text, `$ref` is
// `_ref`, and each `oneof` is chosen from the member's content).
import protobuf from 'protobufjs/light.js';
import { stringify as toYaml } from 'yaml';
import { ONEOFS, openapiV2 } from './gnostic-v2.js';
import { gnosticRoot } from './gnostic-root.js';

type Json = Record<string, unknown>;

// Built on first use, not at load: the gnostic Root costs ~100-170 ms of a start's CPU (bench/startup.ts)
// and is read only when a client asks for the OpenAPI document as protobuf.
let root: protobuf.Root | undefined;

/** The protobufjs type of an openapi.v2 message (also for tests that decode what we serve). */
export function gnosticType(name: string): protobuf.Type {
  return (root ??= gnosticRoot(openapiV2, ONEOFS)).lookupType(`openapi.v2.${name}`);
}

let document: protobuf.Type | undefined;
const documentType = (): protobuf.Type => (document ??= gnosticType('Document'));

/** Which member of a `oneof oneof` a JSON value is, decided as gnostic's parser decides it. */
const ONEOF_MEMBER: Record<string, (v: unknown) => string | undefined> = {
  AdditionalPropertiesItem: (v) => (typeof v === 'boolean' ? 'boolean' : 'schema'),
  Parameter: (v) => ((v as Json)['in'] === 'body' ? 'bodyParameter' : 'nonBodyParameter'),
  NonBodyParameter: (v) =>
    (
      ({
        header: 'headerParameterSubSchema',
        formData: 'formDataParameterSubSchema',
        query: 'queryParameterSubSchema',
        path: 'pathParameterSubSchema',
      }) as Record<string, string>
    )[(v as Json)['in'] as string],
  ParametersItem: (v) => ('$ref' in (v as Json) ? 'jsonReference' : 'parameter'),
  ResponseValue: (v) => ('$ref' in (v as Json) ? 'jsonReference' : 'response'),
  SchemaItem: (v) => ((v as Json)['type'] === 'file' ? 'fileSchema' : 'schema'),
  SecurityDefinitionsItem: (v) => {
    const { type, flow } = v as Json;
    if (type === 'basic') return 'basicAuthenticationSecurity';
    if (type === 'apiKey') return 'apiKeySecurity';
    const byFlow: Record<string, string> = {
      implicit: 'oauth2ImplicitSecurity',
      password: 'oauth2PasswordSecurity',
      application: 'oauth2ApplicationSecurity',
      accessCode: 'oauth2AccessCodeSecurity',
    };
    return type === 'oauth2' ? byFlow[flow as string] : undefined;
  },
};

class GnosticError extends Error {}

function value(field: protobuf.Field, v: unknown, at: string): unknown {
  const t = field.resolvedType;
  if (!(t instanceof protobuf.Type)) return v;
  if (field.repeated) {
    if (!Array.isArray(v)) throw new GnosticError(`${at}: expected an array`);
    return v.map((item, i) => message(t, item, `${at}[${i}]`));
  }
  return message(t, v, at);
}

/** `{name, value}` pairs of a Named* message, one per member of a JSON object. */
function pairs(named: protobuf.Type, obj: Json, at: string, keep: (k: string) => boolean): Json[] {
  const valueField = named.fields['value']!;
  return Object.entries(obj)
    .filter(([k]) => keep(k))
    .map(([k, v]) => ({ name: k, value: value(valueField, v, `${at}.${k}`) }));
}

const isExtension = (k: string) => k.startsWith('x-');

/** A message's field by a document's member name: own fields only (`constructor` or `__proto__` in a schema is a member, not a field). */
const fieldNamed = (type: protobuf.Type, name: string): protobuf.Field | undefined => (Object.hasOwn(type.fields, name) ? type.fields[name] : undefined);

function message(type: protobuf.Type, v: unknown, at: string): Json {
  switch (type.name) {
    case 'Any':
      return { yaml: toYaml(v, { lineWidth: 0 }) };
    case 'TypeItem':
      return { value: Array.isArray(v) ? v : [v] };
    case 'StringArray':
      return { value: v };
    case 'ItemsItem':
      return { schema: (Array.isArray(v) ? v : [v]).map((s, i) => message(gnosticType('Schema'), s, `${at}[${i}]`)) };
  }
  const choose = ONEOF_MEMBER[type.name];
  if (choose) {
    const member = choose(v);
    const field = member === undefined ? undefined : fieldNamed(type, member);
    if (!field) throw new GnosticError(`${at}: not a valid ${type.name}`);
    return { [member!]: value(field, v, at) };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new GnosticError(`${at}: expected an object for ${type.name}`);
  const obj = v as Json;
  const fields = type.fieldsArray;
  // A JSON object of named entries: the one repeated Named* field that is not the vendor extensions.
  const entries = fields.find((f) => f.repeated && f.name !== 'vendorExtension' && f.resolvedType?.name.startsWith('Named'));
  if (entries) {
    const out: Json = { [entries.name]: pairs(entries.resolvedType as protobuf.Type, obj, at, (k) => !(isExtension(k) && type.fields['vendorExtension'])) };
    const ext = type.fields['vendorExtension'];
    if (ext) out['vendorExtension'] = pairs(ext.resolvedType as protobuf.Type, obj, at, isExtension);
    return out;
  }
  const out: Json = {};
  const extensions: Json[] = [];
  for (const [k, member] of Object.entries(obj)) {
    if (isExtension(k) && type.fields['vendorExtension']) {
      extensions.push({ name: k, value: { yaml: toYaml(member, { lineWidth: 0 }) } });
      continue;
    }
    const field = fieldNamed(type, k === '$ref' ? '_ref' : k);
    if (!field) throw new GnosticError(`${at}: ${type.name} has no member "${k}"`);
    out[field.name] = value(field, member, `${at}.${k}`);
  }
  if (extensions.length > 0) out['vendorExtension'] = extensions;
  return out;
}

/** The gnostic message object of a Swagger 2.0 document (plain object, protobufjs field names). */
export function toGnostic(doc: Json): Json {
  return message(documentType(), doc, '$');
}

/** The protobuf bytes of a Swagger 2.0 document; throws when the document has a member gnostic has no field for. */
export function encodeOpenApiV2(doc: Json): Buffer {
  const DOCUMENT = documentType();
  const bytes = DOCUMENT.encode(DOCUMENT.fromObject(toGnostic(doc))).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
