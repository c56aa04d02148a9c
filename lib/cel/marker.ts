// The keys of the one-entry maps the CEL libraries make for values
// @bufbuild/cel has no type for (quantity, IP, CIDR, URL, format, an absent
// optional). JSON can hold any string as a key, "\u0000…" included, so a
// fixed key could be written by a client: its object would then be read as a
// quantity by a library method, equal one under `==`, or pass for an absent
// oldSelf in a transition rule. The key ends in a random part chosen when
// the process starts, which no client can know.
import { randomBytes } from 'node:crypto';
import { isCelMap, type CelValue } from '@bufbuild/cel';

const SALT = randomBytes(12).toString('base64url');

/** The marker key of one library's values. */
export function markerKey(name: string): string {
  return `\u0000${name}:${SALT}`;
}

/** The string a library value made under `key` holds; undefined for any other value. */
export function marked(v: CelValue, key: string): string | undefined {
  if (!isCelMap(v) || v.size !== 1) return undefined;
  const x = v.get(key);
  return typeof x === 'string' ? x : undefined;
}
