// Child processes of the benchmark: each runs one bench script under tsx,
// pinned to one CPU with taskset when the machine has it, and answers
// requests over the IPC channel ({id, cmd, args} → {id, result | error}).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';

const HAS_TASKSET = spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
const CPUS = availableParallelism();

/** How processes are placed, for the report header. */
export function placement(): string {
  if (!HAS_TASKSET) return `no taskset: server and load generator are separate, unpinned processes (${CPUS} CPUs)`;
  if (CPUS < 2) return 'taskset present but 1 CPU: server and load generator share it';
  return 'server processes pinned to CPU 0, load generator to CPU 1 (taskset)';
}

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

export class Child {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    proc.on('message', (m: Reply) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.error !== undefined) w.reject(new Error(`${name}: ${m.error}`));
      else w.resolve(m.result);
    });
    this.exited = new Promise((resolve) =>
      proc.once('exit', (code) => {
        for (const w of this.waiting.values()) w.reject(new Error(`${name} exited with code ${code}`));
        this.waiting.clear();
        resolve(code);
      }),
    );
  }

  get pid(): number {
    return this.proc.pid ?? 0;
  }

  /** CPU seconds (user + system) the process has used, from /proc; NaN where there is none. */
  cpuSeconds(): number {
    return cpuSecondsOf(this.pid);
  }

  call<T>(cmd: string, args: unknown = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.proc.send({ id, cmd, args });
    });
  }

  /** Asks the child to exit (so --cpu-prof can write its profile), killing it after 5 s. */
  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    this.call('exit').catch(() => undefined);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Starts bench/<script> on `cpu`, waiting for its first message ({ready}). */
export async function startChild(
  name: string,
  script: string,
  args: string[],
  cpu: number,
  nodeFlags: string[] = [],
  env?: Record<string, string>,
): Promise<Child> {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const node = [process.execPath, '--import', 'tsx', ...nodeFlags, file, ...args];
  const pinned = HAS_TASKSET && CPUS >= 2;
  const [cmd, ...argv] = pinned ? ['taskset', '-c', String(cpu), ...node] : node;
  const proc = spawn(cmd!, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: env ? { ...process.env, ...env } : process.env });
  const child = new Child(name, proc);
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${name} exited during start (code ${code})`));
    proc.once('exit', onExit);
    proc.once('message', () => {
      proc.off('exit', onExit);
      resolve();
    });
  });
  return child;
}

/** Runs an IPC command loop in a child: handlers by command name; `exit` is built in. */
export function serveCommands(handlers: Record<string, (args: never) => unknown>): void {
  process.on('message', (m: { id: number; cmd: string; args: unknown }) => {
    if (m.cmd === 'exit') {
      process.exit(0);
    }
    const h = handlers[m.cmd];
    if (!h) {
      process.send!({ id: m.id, error: `unknown command "${m.cmd}"` });
      return;
    }
    Promise.resolve()
      .then(() => h(m.args as never))
      .then(
        (result) => process.send!({ id: m.id, result }),
        (err: unknown) => process.send!({ id: m.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
  });
  process.send!({ ready: true });
}

export interface MemoryFigures {
  rss: number;
  heapUsed: number;
  external: number;
}

/** Memory after a full GC (the process must run with --expose-gc). */
export function memoryNow(): MemoryFigures {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
}

/** Writes a heap snapshot (after a full GC, which the snapshot itself does) to `file`; returns its path. */
export function heapSnapshot(file: string): string {
  return writeHeapSnapshot(file);
}

export { freePort } from '../test/helpers/ports.js';

export interface DevPki {
  /** The directory the certificates are in. */
  pki: string;
  /** The admin's client TLS (system:masters). */
  tls: { ca: string; cert: string; key: string };
  /** The CA's key, to sign more client certificates. */
  caKey: string;
  /** Flags that make another Gatehouse serve and verify with the same certificates. */
  tlsFlags: string[];
}

/** The dev PKI a first Gatehouse wrote under its data directory, for the bench's other processes and clients. */
export async function devPki(dataDir: string): Promise<DevPki> {
  const pki = join(dataDir, 'pki');
  const [ca, cert, key, caKey] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key', 'ca.key'].map((f) => readFile(join(pki, f), 'utf8')));
  const tlsFlags = [
    '--tls-cert-file',
    join(pki, 'apiserver.crt'),
    '--tls-private-key-file',
    join(pki, 'apiserver.key'),
    '--client-ca-file',
    join(pki, 'ca.crt'),
  ];
  return { pki, tls: { ca, cert, key }, caKey, tlsFlags };
}

/** The server certificate, its key and the CA of a dev PKI directory, in the order bench/bare.ts and its kin take them. */
export function serverTlsArgs(pki: string): string[] {
  return [join(pki, 'apiserver.crt'), join(pki, 'apiserver.key'), join(pki, 'ca.crt')];
}

/** CPU seconds (user + system) process pid has used, from /proc; NaN where there is none. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Runs `run`, filling in the CPU share the server and the load generator used over it. */
export async function withCpu<T extends { cpu?: { server: number; load: number } }>(
  server: Child,
  load: Child,
  run: () => Promise<T>,
): Promise<T & { cpu: { server: number; load: number } }> {
  const t0 = performance.now();
  const s0 = server.cpuSeconds();
  const l0 = load.cpuSeconds();
  const r = await run();
  const wall = (performance.now() - t0) / 1000;
  const cpu = { server: (server.cpuSeconds() - s0) / wall, load: (load.cpuSeconds() - l0) / wall };
  r.cpu = cpu;
  return r as T & { cpu: typeof cpu };
}
