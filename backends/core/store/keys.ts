// Key helpers: type prefixes and binary search over sorted key arrays.
// Keys are compared as JS strings (UTF-16 code units), the same order that
// Array.prototype.sort() gives, so sorted arrays and searches always agree.

/**
 * The type prefix (`group/resource/`) of a key or of a longer prefix, or
 * undefined when the string has fewer than two `/`-terminated segments.
 */
export function typePrefixOf(s: string): string | undefined {
  const i = s.indexOf('/');
  if (i <= 0) return undefined;
  const j = s.indexOf('/', i + 1);
  if (j <= i + 1) return undefined;
  return s.slice(0, j + 1);
}

/** Throws on keys that cannot be stored (a programming error, not a client one). */
export function assertKey(key: string): string {
  const type = typePrefixOf(key);
  if (type === undefined || key.length === type.length || key.endsWith('/') || key.includes('//')) {
    throw new Error(`invalid store key "${key}": want group/resource/[namespace/]name`);
  }
  return type;
}

/** First index whose key is >= k. */
export function lowerBound(keys: readonly string[], k: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose key is > k. */
export function upperBound(keys: readonly string[], k: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! <= k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The smallest string greater than every string starting with prefix ('' for the empty prefix = no bound). */
export function prefixEnd(prefix: string): string {
  if (prefix === '') return '';
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
