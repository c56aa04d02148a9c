// Server-side apply figures (issue 7): SSA PATCH/s on a realistic Pod and a
// 100-key ConfigMap beside PUT of the same objects, and PUT with managedFields
// bookkeeping on vs off (lib/fieldmanager setUpdateTracking). Self-contained
// like bench/patch.ts: an in-process Gatehouse on the memory store, 16
// keep-alive connections from the same process — compare ratios.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseServeFlags } from '../gateway/config/flags.js';
import { startServer } from '../gateway/server/app.js';
import { devPkiPaths } from '../certs/devpki.js';
import { setUpdateTracking } from '../lib/fieldmanager/index.js';
import { configMap, pod } from './patch.js';
import { freePort } from './procs.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 3000);
const CONNECTIONS = 16;

type Call = (method: string, path: string, body: string, contentType: string) => Promise<{ status: number; text: string }>;

async function loop(what: string, next: (i: number) => Promise<boolean>): Promise<number> {
  let done = 0;
  let failed = 0;
  const end = performance.now() + DURATION;
  const start = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, async (_, c) => {
    for (let i = c; performance.now() < end; i += CONNECTIONS) {
      if (await next(i)) done++; else failed++;
    }
  }));
  const rate = done / ((performance.now() - start) / 1000);
  console.log(`  ${what.padEnd(48)} ${rate.toFixed(0).padStart(7)} req/s${failed ? ` (${failed} failed)` : ''}`);
  return rate;
}

const line = (what: string, pct: number, target: string) => console.log(`  ${what.padEnd(48)} ${pct.toFixed(0).padStart(7)} %   (${target})`);

async function measure(call: Call, label: string, path: string, obj: Record<string, unknown>): Promise<void> {
  const meta = obj['metadata'] as { name: string; labels: Record<string, string> };
  const item = `${path}/${meta.name}`;
  const withLabel = (i: number) => JSON.stringify({ ...obj, metadata: { ...meta, labels: { ...meta.labels, n: String(i) } } });
  const put = () => loop(`PUT ${label}`, async (i) => (await call('PUT', item, withLabel(i), 'application/json')).status === 200);
  const created = await call('POST', path, JSON.stringify(obj), 'application/json');
  if (created.status !== 201) throw new Error(`create ${label}: ${created.status} ${created.text.slice(0, 200)}`);
  await put(); // warm-up
  const tracked = await put();
  setUpdateTracking(false);
  let untracked: number;
  try { untracked = await loop(`PUT ${label}, no managedFields bookkeeping`, async (i) => (await call('PUT', item, withLabel(i), 'application/json')).status === 200); } finally { setUpdateTracking(true); }
  const ssa = await loop(`PATCH apply ${label}`, async (i) => (await call('PATCH', `${item}?fieldManager=bench&force=true`, withLabel(i), 'application/apply-patch+yaml')).status === 200);
  line(`server-side apply / PUT (${label})`, 100 * ssa / tracked, 'target ≥ 40%');
  line(`bookkeeping cost on PUT (${label})`, 100 * (untracked / tracked - 1), 'target ≤ 20%');
}

export async function runApplyBench(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-bench-apply-'));
  const port = await freePort();
  const parsed = parseServeFlags(['--secure-port', String(port), '--data-dir', dataDir, '--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow']);
  if ('error' in parsed) throw new Error(parsed.error);
  const running = await startServer(parsed.options, { log: () => undefined });
  const pki = devPkiPaths(dataDir);
  const [ca, cert, key] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.adminCert, 'utf8'), readFile(pki.adminKey, 'utf8')]);
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS, ca, cert, key });
  const call: Call = (method, path, body, contentType) => new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent, servername: 'localhost', headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
  try {
    for (let i = 0; i < 100; i++) {
      const r = await call('GET', '/readyz', '', 'text/plain').catch(() => undefined);
      if (r?.status === 200) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    console.log(`\nSERVER-SIDE APPLY (in-process memory store, ${CONNECTIONS} connections, ${DURATION} ms each)`);
    const ns = '/api/v1/namespaces/default';
    await measure(call, 'Pod', `${ns}/pods`, pod('bench-apply-pod'));
    await measure(call, 'ConfigMap 100 keys', `${ns}/configmaps`, configMap('bench-apply-cm'));
  } finally {
    agent.destroy();
    await running.shutdown('bench');
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runApplyBench();
