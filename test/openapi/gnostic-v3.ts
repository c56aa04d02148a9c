// An independent reader of gnostic's openapi.v3 protobuf for the tests:
// upstream's OpenAPIv3.proto (google/gnostic-models at commit
// a84a29ee8efac8d764f8dd251aa316fcaa61c60c, copied unchanged beside this file)
// parsed by protobufjs, sharing nothing with lib/openapi's table, and the
// decoded message read back into OpenAPI v3 JSON the way gnostic's
// ToRawInfo writes it (Named* pairs are object members, specification
// extensions `x-…` members, `Any.yaml` a YAML value, a oneof its one member).
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { parse as parseYaml } from 'yaml';

type Json = Record<string, unknown>;

const ROOT = new protobuf.Root().loadSync(fileURLToPath(new URL('./OpenAPIv3.proto', import.meta.url)));
ROOT.resolveAll();

/** What an empty DefaultType reads as: gnostic's parser keeps only scalar defaults, so `default: {}` arrives with no member set. */
export const EMPTY_DEFAULT = '(DefaultType without a member)';

/** Map-valued fields: the Named* pairs of a message that stand for JSON members. */
const MEMBER_FIELDS = new Set(['additionalProperties', 'path', 'responseOrReference', 'specificationExtension']);

function field(f: protobuf.Field, v: unknown): unknown {
  const t = f.resolvedType;
  if (!(t instanceof protobuf.Type)) return v;
  return f.repeated ? (v as Json[]).map((x) => message(t, x)) : message(t, v as Json);
}

function message(type: protobuf.Type, m: Json): unknown {
  switch (type.name) {
    case 'Any':
      return parseYaml(m['yaml'] as string);
    case 'StringArray':
      return m['value'] ?? [];
    case 'ItemsItem': {
      const items = m['schemaOrReference'] as Json[];
      if (items.length !== 1) throw new Error(`ItemsItem with ${items.length} schemas`);
      return message(ROOT.lookupType('openapi.v3.SchemaOrReference'), items[0]!);
    }
  }
  if (type.oneofsArray.length > 0) {
    const set = type.fieldsArray.filter((f) => m[f.name] !== undefined);
    if (set.length === 0 && type.name === 'DefaultType') return EMPTY_DEFAULT;
    if (set.length !== 1) throw new Error(`${type.name}: ${set.length} members of its oneof are set`);
    return field(set[0]!, m[set[0]!.name]);
  }
  const out: Json = {};
  for (const f of type.fieldsArray) {
    const v = m[f.name];
    if (v === undefined) continue;
    if (f.repeated && MEMBER_FIELDS.has(f.name) && f.resolvedType?.name.startsWith('Named')) {
      const valueField = (f.resolvedType as protobuf.Type).fields['value']!;
      // A member named `__proto__` is data: defined, not assigned.
      for (const pair of v as Json[])
        Object.defineProperty(out, pair['name'] as string, { value: field(valueField, pair['value']), enumerable: true, writable: true, configurable: true });
    } else {
      out[f.name === '_ref' ? '$ref' : f.name] = field(f, v);
    }
  }
  return out;
}

/** Decodes openapi.v3.Document bytes into the OpenAPI v3 JSON they carry. */
export function decodeGnosticV3(bytes: Uint8Array): Json {
  const doc = ROOT.lookupType('openapi.v3.Document');
  const m = doc.toObject(doc.decode(bytes), { longs: Number, bytes: String }) as Json;
  return message(doc, m) as Json;
}

/**
 * `expected` (the JSON document) as its gnostic form carries it, aligned with
 * what was decoded: where the decoded document has EMPTY_DEFAULT and the JSON
 * a non-scalar value (kube's `default: {}`), that value becomes EMPTY_DEFAULT;
 * a member whose value is a proto3 zero (0, false, "") and that the decoded
 * document lacks is dropped, since proto3 scalars outside a oneof carry no
 * zero (Go's marshaller, and so kube's bytes, leave them out). Everything
 * else is kept, so any other difference still fails a comparison.
 */
export function asGnosticCarriesIt(expected: unknown, decoded: unknown): unknown {
  if (decoded === EMPTY_DEFAULT) return typeof expected === 'object' ? EMPTY_DEFAULT : expected;
  if (Array.isArray(expected)) return expected.map((x, i) => asGnosticCarriesIt(x, Array.isArray(decoded) ? decoded[i] : undefined));
  if (typeof expected !== 'object' || expected === null) return expected;
  const d = typeof decoded === 'object' && decoded !== null ? (decoded as Json) : {};
  const zero = (x: unknown) => x === 0 || x === false || x === '';
  return Object.fromEntries(
    Object.entries(expected)
      .filter(([k, x]) => Object.hasOwn(d, k) || !zero(x))
      .map(([k, x]) => [k, asGnosticCarriesIt(x, Object.hasOwn(d, k) ? d[k] : undefined)]),
  );
}
