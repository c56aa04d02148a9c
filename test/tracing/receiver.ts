// A real OTLP/HTTP trace receiver for the tests: a node:http server taking
// what the exporter POSTs (ExportTraceServiceRequest in OTLP's JSON encoding:
// hex ids, attributes as typed AnyValues), decoded and checked by hand, so a
// change in what goes on the wire fails here. Spans are kept per request path,
// so several servers can share one receiver.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean | unknown[]>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
  /** The span contexts the span links to (a root made for an untrusted caller links to what it sent). */
  links: Array<{ traceId: string; spanId: string }>;
  resource: Record<string, string | number | boolean | unknown[]>;
}

export interface OtlpReceiver {
  /** host:port, as a TracingConfiguration endpoint names it. */
  readonly hostPort: string;
  /** Spans received, by request path. */
  readonly spans: Map<string, ReceivedSpan[]>;
  /** Requests that were not a valid OTLP JSON export (the answer was 400). */
  readonly refused: string[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };

function value(v: AnyValue): string | number | boolean | unknown[] {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(value);
  throw new Error(`unexpected AnyValue ${JSON.stringify(v)}`);
}

function attributes(list: Array<{ key: string; value: AnyValue }> | undefined): Record<string, string | number | boolean | unknown[]> {
  const out: Record<string, string | number | boolean | unknown[]> = {};
  for (const a of list ?? []) out[a.key] = value(a.value);
  return out;
}

const HEX16 = /^[0-9a-f]{16}$/;
const HEX32 = /^[0-9a-f]{32}$/;

/** Decodes one export request; throws on anything OTLP/JSON does not allow. */
function decode(body: unknown): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  const req = body as { resourceSpans?: Array<{ resource?: { attributes?: [] }; scopeSpans?: Array<{ spans?: Array<Record<string, any>> }> }> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (!Array.isArray(req.resourceSpans)) throw new Error('resourceSpans is not a list');
  for (const rs of req.resourceSpans) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        if (!HEX32.test(s['traceId'])) throw new Error(`traceId ${s['traceId']} is not 32 hex digits`);
        if (!HEX16.test(s['spanId'])) throw new Error(`spanId ${s['spanId']} is not 16 hex digits`);
        const parent = s['parentSpanId'] ?? '';
        if (parent !== '' && !HEX16.test(parent)) throw new Error(`parentSpanId ${parent} is not 16 hex digits`);
        if (typeof s['name'] !== 'string' || typeof s['kind'] !== 'number') throw new Error('span without name or kind');
        out.push({
          traceId: s['traceId'],
          spanId: s['spanId'],
          parentSpanId: parent,
          name: s['name'],
          kind: s['kind'],
          attributes: attributes(s['attributes']),
          status: s['status']?.code ?? 0,
          links: ((s['links'] ?? []) as Array<{ traceId: string; spanId: string }>).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          resource,
        });
      }
    }
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans = new Map<string, ReceivedSpan[]>();
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      try {
        if (req.method !== 'POST') throw new Error(`method ${req.method}`);
        if (!(req.headers['content-type'] ?? '').startsWith('application/json')) throw new Error(`content-type ${req.headers['content-type']}`);
        let raw = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
        const got = decode(JSON.parse(raw.toString('utf8')));
        spans.set(path, [...(spans.get(path) ?? []), ...got]);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (err) {
        refused.push(`${path}: ${err instanceof Error ? err.message : String(err)}`);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    hostPort: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    refused,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The spans of one trace at `path`, once `done` says the trace is complete (a bounded wait: spans are batched). */
/** The first span at `path` that `pred` picks, once one has arrived (a bounded wait: spans are batched). */
export async function findSpan(rx: OtlpReceiver, path: string, pred: (s: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
  for (let i = 0; i < 500; i++) {
    const found = (rx.spans.get(path) ?? []).find(pred);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no such span at ${path}; refused: ${rx.refused.join('; ')}`);
}

export async function traceSpans(rx: OtlpReceiver, path: string, traceId: string, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  let spans: ReceivedSpan[] = [];
  for (let i = 0; i < 500; i++) {
    spans = (rx.spans.get(path) ?? []).filter((s) => s.traceId === traceId);
    if (done(spans)) return spans;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`trace ${traceId} incomplete at ${path}: ${JSON.stringify(spans.map((s) => s.name))}; refused: ${rx.refused.join('; ')}`);
}
