// In-process figures for list pages, steadier than the
// page latency of a shared machine: what one ConfigMapList page costs to
// build and to send through node:https, measured in this process.
//
// 1. Building the JSON body of a page: serializing the whole list on each
//    request (what a server without remembered encodings does), joining each
//    stored object's remembered UTF-8 JSON (`listParts`, items encoded once
//    per stored revision, joined with one Buffer.concat), and the pieces
//    alone (what a streamed body costs before its writes) — µs per page,
//    median of rounds.
// 2. Sending a body through node:https on loopback (server and client in this
//    process, 8 requests in flight): one Buffer.concat (before), sendParts
//    (now), one write per item — CPU µs per request (server + client; the
//    client's share is the same in every column), for a 500-item page
//    (~0.3 MiB) and a 5,000-item list (~3 MiB): the figures behind STREAM_MIN
//    and CHUNK.
//
// `node --import tsx bench/list-render.ts`, or renderFigures() (bench/store-paths.ts).
import { createServer, request, Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { builtinRegistry } from '../lib/registry/index.js';
import { frozenJsonCopy } from '../lib/api/json.js';
import type { KObject } from '../lib/api/meta.js';
import { apiVersionOf } from '../lib/registry/types.js';
import { listParts } from '../backends/core/render.js';
import { sendParts } from '../lib/http/parts.js';
import { newExchange } from '../lib/http/exchange.js';
import { generateCa, generateServingCert } from '../certs/pki.js';
import { out, table } from './report.js';

const configMapType = () => {
  const t = builtinRegistry().lookup('', 'v1', 'configmaps');
  if (!t) throw new Error('no configmaps type');
  return t;
};

/** `n` frozen ConfigMaps shaped like the bench's (about 590 bytes of JSON each), as a store holds them. */
function storedItems(n: number): KObject[] {
  return Array.from({ length: n }, (_, i) =>
    frozenJsonCopy({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `cm-${String(i).padStart(4, '0')}`,
        namespace: 'bench',
        uid: `6f1c1a56-5a0e-4f7e-9a8e-${String(i).padStart(12, '0')}`,
        resourceVersion: String(1000 + i),
        creationTimestamp: '2026-11-27T08:00:00Z',
        labels: { app: 'bench', tier: 'backend' },
        managedFields: [
          {
            manager: 'bench',
            operation: 'Update',
            apiVersion: 'v1',
            time: '2026-11-27T08:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { '.': {}, 'f:app.properties': {}, 'f:mode': {} } },
          },
        ],
      },
      data: { 'app.properties': 'greeting=hello\nlog.level=info\nfeature.flags=a,b,c\n', mode: 'fast' },
    } as KObject),
  );
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function buildFigures(): string[][] {
  const t = configMapType();
  const rows: string[][] = [];
  for (const n of [500, 5000]) {
    const items = storedItems(n);
    const meta = { resourceVersion: '99999' };
    const whole = (): number => JSON.stringify({ kind: t.listKind, apiVersion: apiVersionOf(t), metadata: meta, items }).length;
    const joined = (): number => {
      const { parts, length } = listParts(t, items, meta);
      return Buffer.concat(parts, length).length;
    };
    const pieces = (): number => listParts(t, items, meta).length;
    pieces(); // the first list encodes each item once, as the first reader of a stored revision does
    const time = (f: () => number): number => {
      const reps = Math.max(5, Math.round(20_000 / n));
      const rounds: number[] = [];
      for (let r = 0; r < 7; r++) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < reps; i++) f();
        rounds.push(Number(process.hrtime.bigint() - t0) / 1000 / reps);
      }
      return median(rounds);
    };
    const a = time(whole);
    const b = time(joined);
    const c = time(pieces);
    rows.push([`${n} items`, a.toFixed(0), b.toFixed(0), c.toFixed(0)]);
  }
  return rows;
}

async function sendFigures(): Promise<string[][]> {
  const ca = generateCa('list-render bench CA');
  const cert = generateServingCert(ca);
  const bodies = new Map<number, Buffer[]>();
  const t = configMapType();
  for (const n of [500, 5000]) bodies.set(n, listParts(t, storedItems(n), { resourceVersion: '1' }).parts);
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const [, mode, n] = (req.url ?? '').split('/');
    const parts = bodies.get(Number(n))!;
    const length = parts.reduce((s, p) => s + p.length, 0);
    if (mode === 'stream') {
      sendParts(newExchange(req, res), 200, 'application/json', parts, length);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': length });
    if (mode === 'one') {
      res.end(Buffer.concat(parts, length));
      return;
    }
    res.cork();
    for (let i = 0; i < parts.length - 1; i++) res.write(parts[i]);
    res.end(parts[parts.length - 1]);
    res.uncork();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, maxSockets: 8, ca: ca.certPem });
  const get = (path: string): Promise<number> =>
    new Promise((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, agent, servername: 'localhost' }, (res) => {
        let got = 0;
        res.on('data', (d: Buffer) => (got += d.length));
        res.on('end', () => resolve(got));
      })
        .on('error', reject)
        .end();
    });
  const cpuPer = async (path: string, requests: number): Promise<number> => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < requests; i += 8) await Promise.all(Array.from({ length: 8 }, () => get(path)));
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / requests;
  };
  const rows: string[][] = [];
  try {
    for (const n of [500, 5000]) {
      const requests = n === 500 ? 160 : 24;
      const modes = ['one', 'stream', 'each'];
      for (const m of modes) await cpuPer(`/${m}/${n}`, 8); // warm-up
      const runs = new Map<string, number[]>(modes.map((m) => [m, []]));
      for (let r = 0; r < 5; r++) {
        for (const m of r % 2 ? [...modes].reverse() : modes) runs.get(m)!.push(await cpuPer(`/${m}/${n}`, requests));
      }
      const bytes = bodies.get(n)!.reduce((s, p) => s + p.length, 0);
      rows.push([
        `${n} items (${(bytes / 1024).toFixed(0)} KiB)`,
        median(runs.get('one')!).toFixed(0),
        median(runs.get('stream')!).toFixed(0),
        median(runs.get('each')!).toFixed(0),
      ]);
    }
  } finally {
    agent.destroy();
    server.close();
  }
  return rows;
}

export async function renderFigures(): Promise<void> {
  out();
  out('In-process (bench/list-render.ts): building one ConfigMapList page, µs per page (median of 7 rounds)');
  table(['page', 'serialize whole list', 'remembered items joined', 'pieces only (streamed bodies)'], buildFigures());
  out();
  out('Sending it through node:https on loopback, CPU µs per request (server + client in this process, 8 in flight; median of 5 rounds)');
  out('  before: one Buffer.concat of the pieces; now: sendParts (the same below 512 KiB, 256 KiB writes with drain above)');
  table(['body', 'before', 'now (sendParts)', 'one write per item'], await sendFigures());
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await renderFigures();
