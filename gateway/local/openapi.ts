// The OpenAPI paths as kube-apiserver serves them: /openapi/v2 in JSON or
// gnostic protobuf (chosen by Accept, one ETag for both with `Vary: Accept`,
// 304 on If-None-Match), the pre-1.10 path /swagger-2.0.0.pb-v1 (protobuf
// only, client-go's fallback when /openapi/v2 is refused), and /openapi/v3
// with its per-group-version documents, whose `?hash=` URLs are immutable:
// the current hash is cached for a year, a stale one redirects to the current;
// each of those documents is also served in gnostic's openapi.v3 protobuf
// (kube-openapi's handler3: same ETag as the JSON form, `Vary: Accept`).
import type { IncomingMessage } from 'node:http';
import type { Exchange } from '../../lib/http/exchange.js';
import { notAcceptable, pathNotFound } from '../../lib/api/status.js';
import { sendBody } from '../../lib/http/respond.js';
import { writeHeadWith } from '../../lib/http/carried.js';
import type { OpenApiV3 } from '../../lib/openapi/v3.js';

const JSON_TYPE = 'application/json';
/** What client-go asks for (the `@` form), and the form kube-apiserver answers with. */
export const OPENAPI_V2_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** The Content-Type /swagger-2.0.0.pb-v1 had when kube-openapi served it. */
const LEGACY_PROTOBUF = 'application/com.github.googleapis.gnostic.OpenAPIv2@68f4ded+protobuf';
export const LEGACY_V2_PATH = '/swagger-2.0.0.pb-v1';

/** handler3's two protobuf subtypes; it answers both with the dotted one. */
export const OPENAPI_V3_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf';
export const OPENAPI_V3_PROTOBUF = 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf';

type Format = 'json' | 'protobuf';
const V2_FORMATS: ReadonlyArray<readonly [string, Format]> = [
  [JSON_TYPE, 'json'],
  [OPENAPI_V2_PROTOBUF_ACCEPT, 'protobuf'],
  [OPENAPI_V2_PROTOBUF, 'protobuf'],
];
/** In handler3's order: a wildcard gets JSON. */
const V3_FORMATS: ReadonlyArray<readonly [string, Format]> = [
  [JSON_TYPE, 'json'],
  [OPENAPI_V3_PROTOBUF, 'protobuf'],
  [OPENAPI_V3_PROTOBUF_ACCEPT, 'protobuf'],
];

/** Media ranges of an Accept header, most preferred first (q, then the more specific range), as goautoneg orders them. */
function mediaRanges(accept: string | undefined): string[] {
  const ranges: Array<{ type: string; q: number; wild: number; i: number }> = [];
  (accept || '*/*').split(',').forEach((part, i) => {
    const [type, ...params] = part.split(';');
    const t = type!.trim().toLowerCase();
    if (!t) return;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) : 1;
    if (!(q > 0)) return;
    ranges.push({ type: t, q, wild: t === '*/*' ? 2 : t.endsWith('/*') ? 1 : 0, i });
  });
  return ranges.sort((a, b) => b.q - a.q || a.wild - b.wild || a.i - b.i).map((r) => r.type);
}

function choose<F>(accept: string | undefined, formats: ReadonlyArray<readonly [string, F]>): F | undefined {
  for (const range of mediaRanges(accept)) {
    const slash = range.indexOf('/');
    for (const [type, format] of formats) {
      if (range === '*/*' || range === type || (range.endsWith('/*') && type.startsWith(range.slice(0, slash + 1)))) return format;
    }
  }
  return undefined;
}

/** Whether If-None-Match names this entity tag (a list, `*`, weak tags compared weakly as RFC 9110 says for GET). */
function notModified(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

interface Entity {
  readonly contentType: string;
  readonly body: string | Buffer;
  readonly etag: string;
}

function sendEntity(x: Exchange, e: Entity, headers: Record<string, string> = {}): void {
  const h = { ETag: e.etag, ...headers };
  if (notModified(x.req, e.etag)) {
    writeHeadWith(x, 304, { 'Cache-Control': 'no-cache, private', ...h }).end();
    return;
  }
  sendBody(x, 200, e.contentType, e.body, h);
}

function v2Entity(openapi: OpenApiV3, format: Format, protobufType = OPENAPI_V2_PROTOBUF): Entity {
  const json = openapi.v2();
  // One entity tag for both forms, as kube-apiserver does: `Vary: Accept` keeps caches apart.
  return format === 'json' ? json : { contentType: protobufType, body: openapi.v2Protobuf(), etag: json.etag };
}

function aYearFromNow(): string {
  const d = new Date();
  d.setUTCFullYear(d.getUTCFullYear() + 1);
  return d.toUTCString();
}

/** Answers an OpenAPI path, or returns false when `path` is not one. */
export function serveOpenApi(openapi: OpenApiV3, x: Exchange, path: string, query: URLSearchParams): boolean {
  const req = x.req;
  if (path === '/openapi/v2') {
    const format = choose(req.headers.accept, V2_FORMATS);
    if (!format) throw notAcceptable([JSON_TYPE, OPENAPI_V2_PROTOBUF]);
    sendEntity(x, v2Entity(openapi, format), { Vary: 'Accept' });
    return true;
  }
  if (path === LEGACY_V2_PATH) {
    sendEntity(x, v2Entity(openapi, 'protobuf', LEGACY_PROTOBUF));
    return true;
  }
  if (path === '/openapi/v3') {
    sendEntity(x, openapi.root);
    return true;
  }
  if (!path.startsWith('/openapi/v3/')) return false;
  const gv = path.slice('/openapi/v3/'.length);
  const doc = openapi.document(gv);
  if (!doc) throw pathNotFound();
  const format = choose(req.headers.accept, V3_FORMATS);
  if (!format) throw notAcceptable([JSON_TYPE, OPENAPI_V3_PROTOBUF]);
  const hash = query.get('hash');
  if (hash && hash !== doc.hash) {
    writeHeadWith(x, 301, { Location: `/openapi/v3/${gv}?hash=${doc.hash}`, 'Content-Length': 0, Vary: 'Accept' }).end();
    return true;
  }
  // A hash URL names one version of the document forever: clients may keep it without asking again.
  const cache: Record<string, string> = hash ? { 'Cache-Control': 'public, immutable', Expires: aYearFromNow() } : {};
  // One entity tag for both forms, as handler3 does: `Vary: Accept` keeps caches apart.
  const entity = format === 'json' ? doc : { contentType: OPENAPI_V3_PROTOBUF, body: openapi.v3Protobuf(doc), etag: doc.etag };
  sendEntity(x, entity, { Vary: 'Accept', ...cache });
  return true;
}
