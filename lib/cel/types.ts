// Static CEL types for the gradual checker (check.ts). @bufbuild/cel's own
// types describe runtime values; these also carry what a schema declares
// (object fields, list element types) and type parameters of overloads.

export type Scalar =
  'dyn' | 'int' | 'uint' | 'double' | 'string' | 'bool' | 'bytes' | 'null_type' | 'type' | 'google.protobuf.Duration' | 'google.protobuf.Timestamp';

export type CelT =
  | { readonly kind: 'scalar'; readonly name: Scalar }
  | { readonly kind: 'list'; readonly elem: CelT }
  | { readonly kind: 'map'; readonly key: CelT; readonly value: CelT }
  /** A declared object (a schema's properties): `field` gives a member's type, undefined when not declared; `open` objects have undeclared members too (dyn). */
  | { readonly kind: 'object'; readonly name: string; readonly open: boolean; field(name: string): CelT | undefined }
  /** Library values (kubernetes.Quantity, net.IP, net.CIDR, kubernetes.NamedFormat, kubernetes.URL) and parameterised ones (`optional_type(T)`). */
  | { readonly kind: 'opaque'; readonly name: string; readonly params?: readonly CelT[] }
  /** A type parameter of an overload (`A` in `list(A).indexOf(A)`). */
  | { readonly kind: 'param'; readonly name: string };

const scalars = new Map<Scalar, CelT>();
export function scalar(name: Scalar): CelT {
  let t = scalars.get(name);
  if (!t) scalars.set(name, (t = { kind: 'scalar', name }));
  return t;
}

export const DYN = scalar('dyn');
export const INT = scalar('int');
export const UINT = scalar('uint');
export const DOUBLE = scalar('double');
export const STRING = scalar('string');
export const BOOL = scalar('bool');
export const BYTES = scalar('bytes');
export const NULL = scalar('null_type');
export const TYPE = scalar('type');
export const DURATION = scalar('google.protobuf.Duration');
export const TIMESTAMP = scalar('google.protobuf.Timestamp');

export const listOf = (elem: CelT): CelT => ({ kind: 'list', elem });
export const mapOf = (key: CelT, value: CelT): CelT => ({ kind: 'map', key, value });
export const opaque = (name: string, params?: readonly CelT[]): CelT => (params?.length ? { kind: 'opaque', name, params } : { kind: 'opaque', name });

export const isDyn = (t: CelT): boolean => t.kind === 'scalar' && t.name === 'dyn';

/** cel-go's rendering of a type in messages (`list(string)`, `map(string, int)`). */
export function formatType(t: CelT): string {
  switch (t.kind) {
    case 'scalar':
      return t.name;
    case 'list':
      return `list(${formatType(t.elem)})`;
    case 'map':
      return `map(${formatType(t.key)}, ${formatType(t.value)})`;
    case 'opaque':
      return t.params ? `${t.name}(${t.params.map(formatType).join(', ')})` : t.name;
    case 'object':
    case 'param':
      return t.name;
  }
}

/**
 * Reads a type written as cel-go writes them (`int`, `list(A)`, `map(K, V)`,
 * `timestamp`, `kubernetes.Quantity`); single capitals are type parameters.
 */
export function parseType(s: string): CelT {
  const src = s.trim();
  let i = 0;
  const read = (): CelT => {
    const m = /^[A-Za-z_][\w.]*/.exec(src.slice(i));
    if (!m) throw new Error(`bad type ${JSON.stringify(s)}`);
    i += m[0].length;
    const name = m[0];
    if (src[i] === '(') {
      i++;
      const args: CelT[] = [read()];
      while (src[i] === ',') {
        i++;
        while (src[i] === ' ') i++;
        args.push(read());
      }
      if (src[i++] !== ')') throw new Error(`bad type ${JSON.stringify(s)}`);
      if (name === 'list' && args.length === 1) return listOf(args[0]!);
      if (name === 'map' && args.length === 2) return mapOf(args[0]!, args[1]!);
      if (name !== 'list' && name !== 'map') return opaque(name, args);
      throw new Error(`bad type ${JSON.stringify(s)}`);
    }
    if (/^[A-Z]$/.test(name)) return { kind: 'param', name };
    if (name === 'timestamp') return TIMESTAMP;
    if (name === 'duration') return DURATION;
    if (name === 'null') return NULL;
    if (['dyn', 'int', 'uint', 'double', 'string', 'bool', 'bytes', 'type'].includes(name)) return scalar(name as Scalar);
    return opaque(name);
  };
  const t = read();
  if (i !== src.length) throw new Error(`bad type ${JSON.stringify(s)}`);
  return t;
}
