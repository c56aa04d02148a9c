// Parses a request path once into the attributes authorization and dispatch
// use (kube-apiserver's RequestInfo). Pure: no registry, no I/O.

export interface RequestInfo {
  readonly isResourceRequest: boolean;
  /** Path without the query string. */
  readonly path: string;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection; lowercase HTTP method for non-resource paths. */
  readonly verb: string;
  /** 'api' or 'apis' for resource requests. */
  readonly apiPrefix: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  /** Path segments after the resource part (beyond name/subresource), which no built-in type serves. */
  readonly extraParts: number;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const VERB_BY_METHOD: Record<string, string> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

function nonResource(path: string, method: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    extraParts: 0,
  };
}

/**
 * The path's non-empty segments, cut with indexOf and slice: `split('/')` of a request's path (a fresh string,
 * never in V8's split cache) runs in C++ and took ~1.8k instructions more per path (callgrind, kube's GET path).
 */
function segmentsOf(path: string): string[] {
  const parts: string[] = [];
  const n = path.length;
  let start = 0;
  while (start < n) {
    let end = path.indexOf('/', start);
    if (end < 0) end = n;
    if (end > start) parts.push(path.slice(start, end));
    start = end + 1;
  }
  return parts;
}

// One copy of each namespace paths name: a path's segments are new strings per request, and every
// object created under a path keeps its namespace (24 B per object at 100,000 ConfigMaps in one
// namespace; docs/decisions/2026-11-30-heap-per-object.md). Forgotten all at once when full, as
// a client chooses what its paths name.
const NAMESPACES_MAX = 1024;
const namespaces = new Map<string, string>();

function sharedNamespace(ns: string): string {
  const known = namespaces.get(ns);
  if (known !== undefined) return known;
  if (namespaces.size >= NAMESPACES_MAX) namespaces.clear();
  namespaces.set(ns, ns);
  return ns;
}

/** `watch` is the query's watch flag (read by lib/api/querybool.ts); the caller has already split path and query. */
export function parseRequestInfo(method: string, path: string, watch: boolean): RequestInfo {
  const parts = segmentsOf(path);
  if (parts.length === 0) return nonResource(path, method);
  const prefix = parts[0]!;
  let i = 1;
  let apiGroup = '';
  // Discovery paths (`/api/v1`, `/apis/<g>/<v>`) are non-resource requests, as in kube-apiserver.
  if (prefix === 'apis') {
    if (parts.length < 4) return nonResource(path, method);
    apiGroup = parts[i++]!;
  } else if (prefix === 'api') {
    if (parts.length < 3) return nonResource(path, method);
  } else {
    return nonResource(path, method);
  }
  const apiVersion = parts[i++]!;
  let verb = VERB_BY_METHOD[method] ?? method.toLowerCase();
  // The rest of the path starts at parts[r].
  let r = i;
  // Deprecated `/watch/` path prefix.
  if (parts[r] === 'watch') {
    verb = 'watch';
    r++;
  }
  let namespace = '';
  const left = parts.length - r;
  if (parts[r] === 'namespaces' && left > 1) {
    namespace = sharedNamespace(parts[r + 1]!);
    if (left > 2 && !NAMESPACE_SUBRESOURCES.has(parts[r + 2]!)) r += 2;
  }
  const resource = parts[r] ?? '';
  const name = parts[r + 1] ?? '';
  const subresource = parts[r + 2] ?? '';
  if (verb === 'watch') {
    // already a watch
  } else if (watch && verb === 'get') {
    verb = 'watch';
  } else if (verb === 'get' && name === '') {
    verb = 'list';
  } else if (verb === 'delete' && name === '') {
    verb = 'deletecollection';
  }
  return {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix: prefix,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name,
    extraParts: Math.max(0, parts.length - r - 3),
  };
}
