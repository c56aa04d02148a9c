// The protobufjs Root of one gnostic package (openapi.v2 or openapi.v3) from
// its message table, with field names as protobufjs gives them when it parses
// a .proto (`base_path` → `basePath`): the OpenAPI JSON names.
import protobuf from 'protobufjs/light.js';
import { parseField, type PackageSchema } from '../protobuf/schema/types.js';

/** google.protobuf.Any, the type of gnostic's `Any.value` (its parser never fills it: it writes `Any.yaml`). */
const PROTOBUF_ANY_FIELDS: readonly string[] = ['type_url 1 string', 'value 2 bytes'];

export const fieldName = (protoName: string) => protobuf.util.camelCase(protoName);

/** A resolved Root holding `schema`'s package; each message named in `oneofs` has all its fields in one `oneof oneof`. */
export function gnosticRoot(schema: PackageSchema, oneofs: readonly string[]): protobuf.Root {
  const local = `${schema.alias}.`;
  const messages: Record<string, unknown> = {};
  for (const [name, lines] of Object.entries(schema.messages)) {
    const fields: Record<string, unknown> = {};
    for (const f of lines.map((l) => parseField(l, schema.alias))) {
      const type = f.type.startsWith(local) ? f.type.slice(local.length) : f.type.includes('.') ? `.${f.type}` : f.type;
      fields[fieldName(f.protoName)] = { type, id: f.id, ...(f.repeated ? { rule: 'repeated' } : {}) };
    }
    messages[name] = { fields, ...(oneofs.includes(name) ? { oneofs: { oneof: { oneof: Object.keys(fields) } } } : {}) };
  }
  const anyFields = Object.fromEntries(
    PROTOBUF_ANY_FIELDS.map((l) => parseField(l, 'google.protobuf')).map((f) => [fieldName(f.protoName), { type: f.type, id: f.id }]),
  );
  const [pkg, version] = schema.protoPackage.split('.') as [string, string];
  const root = protobuf.Root.fromJSON({
    nested: {
      [pkg]: { nested: { [version]: { nested: messages } } },
      google: { nested: { protobuf: { nested: { Any: { fields: anyFields } } } } },
    },
  } as protobuf.INamespace);
  root.resolveAll();
  return root;
}
