// `isURL(string)` of the Kubernetes URL library. The URL type itself
// (`url()`, `getHost()`, …) needs an object type, which @bufbuild/cel only
// offers through protobuf descriptors; it is not provided yet (see README).
import { celFunc, CelScalar, type CelFunc } from '@bufbuild/cel';

/** Go's url.Parse accepts absolute URLs and absolute paths; so do we. */
export function isUrl(s: string): boolean {
  if (s.startsWith('/')) return !/\s/.test(s);
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)) return false;
  return URL.canParse(s);
}

export const urlFunctions: readonly CelFunc[] = [
  celFunc('isURL', [CelScalar.STRING], CelScalar.BOOL, (s: string) => isUrl(s)),
];
