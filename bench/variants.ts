// One Gatehouse per configuration under comparison (auditing off/on, tracing
// off/on, …), all with the same PKI so one client talks to all: the first
// server makes the dev PKI, the others are started on its certificates. Each
// gets the `bench` namespace and configmap `c1`; `configmapRun` measures GET
// of it or creates, through the raw load generator. Used by bench/audit.ts
// and bench/tracing.ts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Admin } from './admin.js';
import { freePort, startChild, type Child } from './procs.js';
import type { LoopResult } from './rawclient.js';

export interface Tls {
  ca: string;
  cert: string;
  key: string;
}

export interface Variants {
  /** The first server, started without extra flags. */
  readonly baseline: { port: number; child: Child };
  readonly tls: Tls;
  /** Starts another server with `flags` on the baseline's PKI, on CPU 0. */
  start(name: string, flags: string[], env?: Record<string, string>): Promise<{ port: number; child: Child }>;
}

/** `children` collects every process started, for the caller to stop. */
export async function startVariants(root: string, prefix: string, base: string[], children: Child[]): Promise<Variants> {
  const port = await freePort();
  const child = await startChild(`${prefix}-off`, './server.ts', ['--secure-port', String(port), '--data-dir', join(root, 'off'), ...base], 0);
  children.push(child);
  const pki = join(root, 'off', 'pki');
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
  const tlsFlags = [
    '--tls-cert-file',
    join(pki, 'apiserver.crt'),
    '--tls-private-key-file',
    join(pki, 'apiserver.key'),
    '--client-ca-file',
    join(pki, 'ca.crt'),
  ];
  return {
    baseline: { port, child },
    tls: { ca: ca!, cert: cert!, key: key! },
    async start(name, flags, env) {
      const p = await freePort();
      const c = await startChild(
        `${prefix}-${name}`,
        './server.ts',
        ['--secure-port', String(p), '--data-dir', join(root, name), ...base, ...tlsFlags, ...flags],
        0,
        [],
        env,
      );
      children.push(c);
      return { port: p, child: c };
    },
  };
}

/** The `bench` namespace and configmap `c1` on each server. */
export async function seedConfigmaps(ports: readonly number[], tls: Tls): Promise<void> {
  for (const port of ports) {
    const a = new Admin(port, tls);
    await a.ready();
    await a.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    await a.must('POST', '/api/v1/namespaces/bench/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { a: 'b' } });
    a.close();
  }
}

const BODY = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'bench' }, data: { mode: 'fast', greeting: 'hello' } });

/** One measured run: GET configmap c1, or creates with unique names, over 50 connections. */
export function configmapRun(load: Child, tls: Tls, port: number, method: 'GET' | 'POST', o: { warmupMs: number; durationMs: number }): Promise<LoopResult> {
  const req =
    method === 'GET' ? { method, path: '/api/v1/namespaces/bench/configmaps/c1' } : { method, path: '/api/v1/namespaces/bench/configmaps', body: BODY };
  return load.call<LoopResult>('fixed', {
    connections: 50,
    warmupMs: o.warmupMs,
    durationMs: o.durationMs,
    maxRequests: 5_000_000,
    target: { port, ...tls },
    req,
    uniqueNames: method === 'POST',
  });
}
