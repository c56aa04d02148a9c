// The in-process harness of the PATCH and apply benchmarks: a Gatehouse on
// the memory store in this process, a keep-alive admin client, and a closed
// rate loop over a few connections. Only ratios between rows of one run mean
// anything here (client and server share a process).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseServeFlags } from '../gateway/config/flags.js';
import { startServer } from '../gateway/server/app.js';
import { devPkiPaths } from '../certs/devpki.js';
import { freePort } from './procs.js';
import { Admin } from './admin.js';

export const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 3000);
export const CONNECTIONS = 16;

export type Call = (method: string, path: string, body: string, contentType: string) => Promise<{ status: number; text: string }>;

/** Requests/s of `next` over CONNECTIONS concurrent loops for DURATION ms; prints one line. */
export async function rateLoop(what: string, next: (i: number) => Promise<boolean>): Promise<number> {
  let done = 0;
  let failed = 0;
  const end = performance.now() + DURATION;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, c) => {
      for (let i = c; performance.now() < end; i += CONNECTIONS) {
        if (await next(i)) done++;
        else failed++;
      }
    }),
  );
  const rate = done / ((performance.now() - start) / 1000);
  console.log(`  ${what.padEnd(48)} ${rate.toFixed(0).padStart(7)} req/s${failed ? ` (${failed} failed)` : ''}`);
  return rate;
}

/** Runs `fn` against a fresh in-process server, then shuts it down and removes its data. */
/** What a section needs to open its own connections (a watch) to the in-process server. */
export interface ServerContext {
  readonly port: number;
  readonly tls: { ca: string; cert: string; key: string };
  /** The server's own certificate and key (a floor server in the section can present the same). */
  readonly serving: { cert: string; key: string };
}

export async function withInProcessServer(name: string, fn: (call: Call, server: ServerContext) => Promise<void>): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), `gatehouse-bench-${name}-`));
  const port = await freePort();
  const parsed = parseServeFlags(['--secure-port', String(port), '--data-dir', dataDir, '--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow']);
  if ('error' in parsed) throw new Error(parsed.error);
  const running = await startServer(parsed.options, { log: () => undefined });
  const pki = devPkiPaths(dataDir);
  const [ca, cert, key, servingCert, servingKey] = await Promise.all(
    [pki.caCert, pki.adminCert, pki.adminKey, pki.servingCert, pki.servingKey].map((f) => readFile(f, 'utf8')),
  );
  const admin = new Admin(port, { ca: ca!, cert: cert!, key: key! }, CONNECTIONS);
  try {
    await admin.ready();
    await fn((method, path, body, contentType) => admin.send(method, path, body, contentType), {
      port,
      tls: { ca: ca!, cert: cert!, key: key! },
      serving: { cert: servingCert!, key: servingKey! },
    });
  } finally {
    admin.close();
    await running.shutdown('bench');
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A rate loop's requests/s and this process's CPU ms per request (client and server share it; steadier than rates on a shared machine). */
export interface Rate {
  readonly rate: number;
  readonly cpu: number;
}

/** Runs a rate loop and measures the process's CPU over it; `count` reads how many requests have been made so far. */
export async function measuredRate(loop: () => Promise<number>, count: () => number): Promise<Rate> {
  const before = count();
  const start = process.cpuUsage();
  const rate = await loop();
  const used = process.cpuUsage(start);
  return { rate, cpu: (used.user + used.system) / 1000 / Math.max(1, count() - before) };
}

/** The mean of several rounds' rates and CPU per request. */
export function meanRate(xs: readonly Rate[]): Rate {
  return { rate: xs.reduce((a, x) => a + x.rate, 0) / xs.length, cpu: xs.reduce((a, x) => a + x.cpu, 0) / xs.length };
}
