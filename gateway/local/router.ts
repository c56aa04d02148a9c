// Non-resource paths the gateway answers itself: health, version,
// discovery, OpenAPI (openapi.ts), /metrics, the priority-and-fairness
// dumps under /debug/api_priority_and_fairness/ and the root path list.
import type { Exchange } from '../../lib/http/exchange.js';
import { methodNotAllowed, pathNotFound } from '../../lib/api/status.js';
import { DISCOVERY_AS, negotiateOutput, type Output } from '../../lib/http/negotiate.js';
import { encodeEnvelope } from '../../lib/protobuf/codec.js';
import { sendBody, sendGzipped, wantsGzip } from '../../lib/http/respond.js';
import { encodeCbor } from '../../lib/cbor/encode.js';
import { writeHeadWith } from '../../lib/http/carried.js';
import type { HealthEndpoint } from '../health/endpoint.js';
import type { OpenApiV3 } from '../../lib/openapi/v3.js';
import { serveOpenApi } from './openapi.js';

export interface Document {
  readonly body: string;
  readonly etag: string;
  readonly contentType: string;
}

/** Discovery documents by path; `aggregated` names the apidiscovery.k8s.io version asked for. */
export interface DiscoverySource {
  document(path: string, aggregated?: 'v2' | 'v2beta1'): Document | undefined;
  readonly version: Document;
}

export interface LocalRoutes {
  health: Record<'healthz' | 'livez' | 'readyz', HealthEndpoint>;
  discovery: DiscoverySource;
  openapi: OpenApiV3;
  /** Prometheus text exposition of the process registry (GET /metrics). */
  /** The exposition, gzipped by the metrics registry itself when `gzip` (it keeps what did not change since the last scrape). */
  metrics?: (gzip: boolean) => Promise<{ contentType: string; body: Buffer; gzipped: boolean }>;
  /** /debug/… text answers (gateway/flowcontrol/debug.ts): the body, or undefined for a path it does not serve. */
  debug?: (path: string, query: URLSearchParams) => string | undefined;
  /** The CBORServingAndStorage gate: discovery in CBOR when asked, as kube's negotiated discovery serializers. */
  cbor?: boolean;
}

/** A document's CBOR body, encoded on its first CBOR request and kept with it (documents never change). */
const cborBodies = new WeakMap<Document, Buffer>();
function cborBody(doc: Document): Buffer {
  let b = cborBodies.get(doc);
  if (b === undefined) cborBodies.set(doc, (b = encodeCbor(JSON.parse(doc.body) as object)));
  return b;
}

/** A document's protobuf body (aggregated discovery v2 only), encoded on its first protobuf request and kept with it. */
const protobufBodies = new WeakMap<Document, Buffer>();
function protobufBody(doc: Document): Buffer {
  let b = protobufBodies.get(doc);
  if (b === undefined) protobufBodies.set(doc, (b = encodeEnvelope(JSON.parse(doc.body) as Record<string, unknown>)));
  return b;
}

/**
 * `out`: the negotiated form; a CBOR or protobuf answer is encoded from the
 * document's JSON once. The ETag names the object, whichever form (Vary: Accept).
 */
function sendDocument(x: Exchange, doc: Document, out?: Output): void {
  const other = out?.format === 'cbor' || out?.format === 'protobuf' ? out : undefined;
  const contentType = other ? other.contentType : doc.contentType;
  const headers: Record<string, string> = other ? { ETag: doc.etag, Vary: 'Accept' } : { ETag: doc.etag };
  if (x.req.headers['if-none-match'] === doc.etag) {
    writeHeadWith(x, 304, { ...headers, 'Content-Type': contentType }).end();
    return;
  }
  const body = !other ? doc.body : other.format === 'cbor' ? cborBody(doc) : protobufBody(doc);
  sendBody(x, 200, contentType, body, headers);
}

export async function serveLocal(routes: LocalRoutes, x: Exchange, path: string, query: URLSearchParams): Promise<void> {
  const req = x.req;
  if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed(req.method ?? '', path);
  const clean = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const slash = clean.indexOf('/', 1);
  const head = slash < 0 ? clean.slice(1) : clean.slice(1, slash);
  if (head === 'healthz' || head === 'livez' || head === 'readyz') {
    const answer = await routes.health[head].serve(slash < 0 ? '' : clean.slice(slash + 1), query);
    sendBody(x, answer.code, 'text/plain; charset=utf-8', answer.body, { 'X-Content-Type-Options': 'nosniff' });
    return;
  }
  if (clean === '/metrics' && routes.metrics) {
    const m = await routes.metrics(req.method === 'GET' && wantsGzip(x));
    if (m.gzipped) sendGzipped(x, 200, m.contentType, m.body);
    else sendBody(x, 200, m.contentType, m.body);
    return;
  }
  if (head === 'debug' && routes.debug) {
    const text = routes.debug(clean, query);
    if (text === undefined) throw pathNotFound();
    sendBody(x, 200, 'text/plain; charset=utf-8', text, { 'X-Content-Type-Options': 'nosniff' });
    return;
  }
  if (clean === '/version') {
    sendDocument(x, routes.discovery.version);
    return;
  }
  if (head === 'api' || head === 'apis') {
    // Protobuf only for aggregated discovery (the legacy documents are JSON here; clients ask for JSON next).
    const out = negotiateOutput(req.headers.accept, DISCOVERY_AS, { cbor: routes.cbor === true });
    const aggregated = out.as === 'APIGroupDiscoveryList' ? (out.asVersion as 'v2' | 'v2beta1') : undefined;
    const doc = routes.discovery.document(clean, aggregated);
    if (!doc) throw pathNotFound();
    sendDocument(x, doc, out);
    return;
  }
  if (serveOpenApi(routes.openapi, x, clean, query)) return;
  if (clean === '/') {
    sendBody(x, 200, 'application/json', JSON.stringify({ paths: rootPaths(routes) }, null, 2));
    return;
  }
  throw pathNotFound();
}

function rootPaths(routes: LocalRoutes): string[] {
  const paths = [
    '/api',
    '/api/v1',
    '/apis',
    '/healthz',
    '/livez',
    '/openapi/v2',
    '/openapi/v3',
    '/readyz',
    '/version',
    ...(routes.metrics ? ['/metrics'] : []),
  ];
  const apis = routes.discovery.document('/apis');
  if (apis) {
    const list = JSON.parse(apis.body) as { groups?: Array<{ name: string; versions: Array<{ groupVersion: string }> }> };
    for (const g of list.groups ?? []) {
      paths.push(`/apis/${g.name}`);
      for (const v of g.versions) paths.push(`/apis/${v.groupVersion}`);
    }
  }
  return paths.sort();
}
