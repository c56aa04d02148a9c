// Shape of the generated message tables and the parser for their field lines.
// A table stays a list of short strings so a 200-message package reads like the
// .proto it came from; the parse happens once at module load.

export interface PackageSchema {
  /** Short name used to qualify references across tables (`meta.ObjectMeta`). */
  alias: string;
  /** The proto package, so the protobufjs Root carries the real full names. */
  protoPackage: string;
  /** Messages whose Go type is a named slice (`type ExtraValue []string`): JSON is a bare array. */
  namedSlices?: string[];
  messages: Record<string, string[]>;
}

export interface FieldSpec {
  protoName: string;
  id: number;
  /** Scalar proto type, or a qualified message name `alias.Name`. */
  type: string;
  repeated: boolean;
  keyType?: string;
  /** JSON name from the Go tag (same as protoName unless the table says `json=`). */
  jsonName: string;
  /** Go `omitempty`: a zero value is left out of the JSON form. */
  omitempty: boolean;
  /** Go `omitzero`: a zero struct (e.g. the zero Time) is left out. */
  omitzero: boolean;
  /** Go pointer: presence on the wire is kept, absent stays absent. */
  pointer: boolean;
  /** Go embedded struct: its fields are promoted into the parent JSON object. */
  inline: boolean;
}

export const SCALARS = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'double', 'float']);

const qualify = (t: string, alias: string) => (SCALARS.has(t) || t.includes('.') ? t : `${alias}.${t}`);

export function parseField(line: string, alias: string): FieldSpec {
  const [protoName, id, rawType, ...flags] = line.split(' ');
  if (!protoName || !id || !rawType) throw new Error(`bad field line "${line}"`);
  const map = /^map<(\w+),([\w.]+)>$/.exec(rawType);
  const repeated = rawType.startsWith('[]');
  const base = map ? map[2]! : repeated ? rawType.slice(2) : rawType;
  const json = flags.find((f) => f.startsWith('json='));
  return {
    protoName,
    id: Number(id),
    type: qualify(base, alias),
    repeated,
    ...(map ? { keyType: map[1]! } : {}),
    jsonName: json ? json.slice(5) : protoName,
    omitempty: flags.includes('?'),
    omitzero: flags.includes('0'),
    pointer: flags.includes('*'),
    inline: flags.includes('inline'),
  };
}
