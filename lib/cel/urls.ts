// The Kubernetes URL library (k8s.io/apiserver/pkg/cel/library/urls.go):
// `isURL(string)`, `url(string)` and the URL's getters. Both accept what Go's
// url.ParseRequestURI accepts (an absolute URL or an absolute path); `url()`
// then keeps url.Parse's reading of the string (requesturi.ts). A URL is a
// one-entry map under a marker key (see quantity.ts for why) holding the
// string with its scheme lower-cased, so `==` compares URLs as written.
import { celFunc, celList, celMap, celMethod, CelScalar, type CelFunc, type CelValue } from '@bufbuild/cel';
import { parseRequestUriError, parseUrl, unescape, type GoUrl } from './requesturi.js';
import { marked, markerKey } from './marker.js';

const URL_KEY = markerKey('k8s.url');
const { DYN, STRING, BOOL } = CelScalar;

/** kube's isURL: whether Go's url.ParseRequestURI accepts the string. */
export function isUrl(s: string): boolean {
  return parseRequestUriError(s) === undefined;
}

function toUrl(s: string): CelValue {
  const err = parseRequestUriError(s);
  const u = err === undefined ? parseUrl(s) : { error: err };
  if ('error' in u) throw new Error(`URL parse error during conversion from string: ${u.error}`);
  const colon = u.scheme === '' ? -1 : s.indexOf(':');
  return celMap(new Map([[URL_KEY, colon < 0 ? s : `${u.scheme}${s.slice(colon)}`]]));
}

function urlOf(v: CelValue): GoUrl {
  const s = marked(v, URL_KEY);
  if (s === undefined) throw new Error('no such overload: not a URL');
  const u = parseUrl(s);
  if ('error' in u) throw new Error(u.error); // cannot happen: url() parsed it
  return u;
}

/** Go's splitHostPort of url.URL: a trailing `:digits` is the port; brackets are dropped. */
function splitHostPort(hostPort: string): { host: string; port: string } {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && /^:[0-9]*$/.test(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port };
}

// RFC 3986 pchar plus '/', '[', ']' and '%' (Go's validEncoded in path mode): a path written so is kept as written.
const VALID_ENCODED_PATH = /^[A-Za-z0-9\-_.~!$&'()*+,;=:@/[\]%]*$/;
// What Go's escape leaves alone in a path.
const PATH_OK = /^[A-Za-z0-9\-_.~$&+,/:;=@]$/;

/** Go's URL.EscapedPath: the path as written when that is a valid encoding, else Go's escaping of the decoded path. */
function escapedPath(u: GoUrl): string {
  if (VALID_ENCODED_PATH.test(u.rawPath)) return u.rawPath;
  const path = unescape(u.rawPath);
  let out = '';
  for (const b of Buffer.from(path, 'utf8')) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && PATH_OK.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's url.ParseQuery, errors ignored (as URL.Query): a pair with `;` or a bad escape is dropped. */
function query(raw: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of raw.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    const [k, v] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    if (/%(?![0-9A-Fa-f]{2})/.test(k) || /%(?![0-9A-Fa-f]{2})/.test(v)) continue;
    const key = unescape(k, true);
    const list = out.get(key);
    if (list) list.push(unescape(v, true));
    else out.set(key, [unescape(v, true)]);
  }
  return out;
}

export const urlFunctions: readonly CelFunc[] = [
  celFunc('isURL', [STRING], BOOL, (s: string) => isUrl(s)),
  celFunc('url', [STRING], DYN, (s: string) => toUrl(s)),
  celMethod('getScheme', DYN, [], STRING, function (this: CelValue) {
    return urlOf(this).scheme;
  }),
  celMethod('getHost', DYN, [], STRING, function (this: CelValue) {
    return urlOf(this).host;
  }),
  celMethod('getHostname', DYN, [], STRING, function (this: CelValue) {
    return splitHostPort(urlOf(this).host).host;
  }),
  celMethod('getPort', DYN, [], STRING, function (this: CelValue) {
    return splitHostPort(urlOf(this).host).port;
  }),
  celMethod('getEscapedPath', DYN, [], STRING, function (this: CelValue) {
    return escapedPath(urlOf(this));
  }),
  celMethod('getQuery', DYN, [], DYN, function (this: CelValue) {
    return celMap(new Map([...query(urlOf(this).rawQuery)].map(([k, v]) => [k, celList(v)])));
  }),
];
