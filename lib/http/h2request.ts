// The options of an HTTP/2 client request.
//
// Node 20's `ClientHttp2Session.request` copies the options with a spread and then adds
// `weight`, `parent`, `exclusive` and `silent` when they are missing: on its V8 such an object
// gets a hidden class of its own per request, and each of the dozen loads and stores on it in
// `request`, `setAndValidatePriorityOptions` and `requestOnConnect` misses the inline caches
// (docs/decisions/2026-11-30-read-path-ic-misses.md). Given there with Node's own defaults
// (weight 16, parent 0, not exclusive, not silent), the copy keeps the source's members, shares
// one hidden class, and the request sent is the same. Node 22 and later deprecate priority
// signalling (DEP0194, RFC 9113) and warn when any of the four is given, so there only
// `endStream` is passed.

/** Whether this Node takes the priority members without a deprecation warning (before 22). */
const PRIORITY_DEFAULTS = Number(process.versions.node.split('.')[0]) < 22;

export interface H2RequestOptions {
  endStream: boolean;
  weight?: number;
  parent?: number;
  exclusive?: boolean;
  silent?: boolean;
}

/** `session.request(headers, h2RequestOptions(endStream))`: Node's default priority; on Node 20 one hidden class. */
export function h2RequestOptions(endStream: boolean): H2RequestOptions {
  return PRIORITY_DEFAULTS ? { endStream, weight: 16, parent: 0, exclusive: false, silent: false } : { endStream };
}
