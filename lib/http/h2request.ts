// The options of an HTTP/2 client request, with every member Node's `request` would otherwise add.
//
// Node 20's `ClientHttp2Session.request` copies the options with a spread and then adds
// `weight`, `parent`, `exclusive` and `silent` when they are missing: on its V8 such an object
// gets a hidden class of its own per request, and each of the dozen loads and stores on it in
// `request`, `setAndValidatePriorityOptions` and `requestOnConnect` misses the inline caches
// (docs/decisions/2026-11-30-read-path-ic-misses.md). Given here with Node's own defaults
// (weight 16, parent 0, not exclusive, not silent), the copy keeps the source's members, shares
// one hidden class, and the request sent is the same.

/** `session.request(headers, h2RequestOptions(endStream))`: Node's default priority, one hidden class. */
export function h2RequestOptions(endStream: boolean): { endStream: boolean; weight: number; parent: number; exclusive: boolean; silent: boolean } {
  return { endStream, weight: 16, parent: 0, exclusive: false, silent: false };
}
