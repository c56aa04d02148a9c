// The inverse of lib/openapi/v2proto.ts for tests: a decoded openapi.v2
// message back to Swagger 2.0 JSON, read the way kube-openapi's consumers
// read it (Named* pairs are object members, vendor extensions `x-…` members,
// `Any.yaml` a YAML value, a oneof its one set member).
import protobuf from 'protobufjs/light.js';
import { parse as parseYaml } from 'yaml';
import { gnosticType } from '../../lib/openapi/v2proto.js';

type Json = Record<string, unknown>;

function field(f: protobuf.Field, v: unknown): unknown {
  const t = f.resolvedType;
  if (!(t instanceof protobuf.Type)) return v;
  return f.repeated ? (v as unknown[]).map((x) => message(t, x as Json)) : message(t, v as Json);
}

function message(type: protobuf.Type, m: Json): unknown {
  switch (type.name) {
    case 'Any':
      return parseYaml(m['yaml'] as string);
    case 'TypeItem': {
      const v = m['value'] as string[];
      return v.length === 1 ? v[0] : v;
    }
    case 'StringArray':
      return m['value'] ?? [];
    case 'ItemsItem': {
      const v = (m['schema'] as Json[]).map((s) => message(gnosticType('Schema'), s));
      return v.length === 1 ? v[0] : v;
    }
  }
  if (type.oneofsArray.length > 0) {
    const set = type.fieldsArray.filter((f) => m[f.name] !== undefined);
    if (set.length !== 1) throw new Error(`${type.name}: ${set.length} members of its oneof are set`);
    return field(set[0]!, m[set[0]!.name]);
  }
  const out: Json = {};
  for (const f of type.fieldsArray) {
    const v = m[f.name];
    if (v === undefined) continue;
    const named = f.repeated && f.resolvedType?.name.startsWith('Named');
    if (named) {
      const valueField = (f.resolvedType as protobuf.Type).fields['value']!;
      for (const pair of v as Json[]) out[pair['name'] as string] = field(valueField, pair['value']);
    } else {
      out[f.name === '_ref' ? '$ref' : f.name] = field(f, v);
    }
  }
  return out;
}

/** Decodes openapi.v2.Document bytes into the Swagger 2.0 JSON they carry. */
export function decodeGnosticV2(bytes: Uint8Array): Json {
  const doc = gnosticType('Document');
  const m = doc.toObject(doc.decode(bytes), { longs: Number, bytes: String }) as Json;
  return message(doc, m) as Json;
}
