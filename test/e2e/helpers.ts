// End-to-end helpers: run `gatehouse serve` as a real child process on a free
// loopback port with its own data directory, talk to it over HTTPS with the
// generated admin certificate, and drive the machine's real kubectl with a
// private HOME and cache. Every process started here is tracked and killed by
// stopAll() (call it from `after`), and SIGKILLed on exit as a last resort.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpsClient } from '../helpers/client.js';
import { freePort } from '../helpers/ports.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const GATEHOUSE_BIN = join(ROOT, 'bin', 'gatehouse.js');

const tracked = new Set<ChildProcess>();
/** Children started in their own process group (npm → sh → node), killed as a group. */
const detachedPids = new Set<number>();
const tempDirs = new Set<string>();

function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(detachedPids.has(child.pid) ? -child.pid : child.pid, signal);
  } catch {
    /* already gone */
  }
}

function killTracked(signal: NodeJS.Signals): void {
  for (const child of tracked) signalChild(child, signal);
}

process.on('exit', () => killTracked('SIGKILL'));

/** Kills every process started by these helpers, waits for them, and removes the temp directories. */
export async function stopAll(): Promise<void> {
  killTracked('SIGKILL');
  await Promise.all([...tracked].map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : once(c, 'exit'))));
  tracked.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** A temp directory removed by stopAll(). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-e2e-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}

export { freePort };

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A child process with its output collected and its exit awaited. */
export class Proc {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: Array<() => void> = [];

  constructor(readonly child: ChildProcess) {
    tracked.add(child);
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      this.stdout += d;
      this.wake();
    });
    child.stderr?.on('data', (d: string) => {
      this.stderr += d;
      this.wake();
    });
    this.exited = new Promise((resolve) => {
      // 'close' comes after the output streams ended, so stdout/stderr are complete.
      child.once('close', (code, signal) => {
        this.wake();
        resolve({ code, signal });
      });
    });
    child.once('exit', () => this.wake());
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits until `test` holds on the output so far; throws with the output when it does not in time. */
  async waitFor(what: string, test: (p: Proc) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Waits for the process to exit; SIGKILLs it and throws if it does not in time. */
  async waitExit(timeoutMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        signalChild(this.child, 'SIGKILL');
        reject(new Error(`process did not exit within ${timeoutMs}ms\nstdout: ${this.stdout}\nstderr: ${this.stderr}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    signalChild(this.child, signal);
  }
}

export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  detached?: boolean;
}

/** Spawns a tracked process. `detached` puts it in its own process group, killed as a whole. */
export function spawnTracked(command: string, args: readonly string[], opts: SpawnOptions = {}): Proc {
  const child = spawn(command, args, {
    cwd: opts.cwd ?? ROOT,
    env: opts.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  if (opts.detached && child.pid !== undefined) detachedPids.add(child.pid);
  return new Proc(child);
}

/** Runs `gatehouse <args>` to completion (for commands that end by themselves). */
export async function runGatehouse(args: readonly string[], timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnTracked(process.execPath, [GATEHOUSE_BIN, ...args]);
  p.child.stdin?.end();
  const { code } = await p.waitExit(timeoutMs);
  return { code, stdout: p.stdout, stderr: p.stderr };
}

export interface ServeOptions {
  /** Reuse a data directory (for restarts); default: a fresh temp directory. */
  dataDir?: string;
  port?: number;
  /** Extra flags after --secure-port and --data-dir. */
  flags?: readonly string[];
  /** Wait for /readyz to answer 200 (default true). */
  waitReady?: boolean;
}

export interface Gatehouse {
  readonly proc: Proc;
  readonly port: number;
  readonly url: string;
  readonly dataDir: string;
  readonly kubeconfig: string;
  /** HTTPS client with the generated admin certificate (system:masters). */
  readonly admin: HttpsClient;
  /** HTTPS client without a client certificate. */
  readonly anonymous: HttpsClient;
  /** SIGTERM, then waits for exit. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** kill -9, then waits for exit. */
  crash(): Promise<void>;
}

export function pkiPaths(dataDir: string): { ca: string; cert: string; key: string; kubeconfig: string } {
  return {
    ca: join(dataDir, 'pki', 'ca.crt'),
    cert: join(dataDir, 'pki', 'admin.crt'),
    key: join(dataDir, 'pki', 'admin.key'),
    kubeconfig: join(dataDir, 'admin.kubeconfig'),
  };
}

/** Starts `node bin/gatehouse.js serve` on a free loopback port and waits until /readyz is 200. */
export async function startGatehouse(opts: ServeOptions = {}): Promise<Gatehouse> {
  const dataDir = opts.dataDir ?? tempDir('data');
  const port = opts.port ?? (await freePort());
  const proc = spawnTracked(process.execPath, [GATEHOUSE_BIN, 'serve', `--secure-port=${port}`, `--data-dir=${dataDir}`, ...(opts.flags ?? [])]);
  proc.child.stdin?.end();
  await proc.waitFor('"Gatehouse is serving" on stdout', (p) => p.stdout.includes('Gatehouse is serving on') || !p.running, 60_000);
  if (!proc.running) {
    const { code } = await proc.exited;
    throw new Error(`gatehouse exited with code ${code} before serving\nstderr: ${proc.stderr}`);
  }
  const paths = pkiPaths(dataDir);
  const ca = readFileSync(paths.ca, 'utf8');
  const url = `https://127.0.0.1:${port}`;
  const admin = new HttpsClient(url, { ca, cert: readFileSync(paths.cert, 'utf8'), key: readFileSync(paths.key, 'utf8') });
  const anonymous = new HttpsClient(url, { ca });
  const gh: Gatehouse = {
    proc,
    port,
    url,
    dataDir,
    kubeconfig: paths.kubeconfig,
    admin,
    anonymous,
    async stop(timeoutMs = 30_000) {
      admin.close();
      anonymous.close();
      proc.kill('SIGTERM');
      return proc.waitExit(timeoutMs);
    },
    async crash() {
      proc.kill('SIGKILL');
      await proc.exited;
      admin.close();
      anonymous.close();
    },
  };
  if (opts.waitReady !== false) await waitReady(gh);
  return gh;
}

/** Polls /readyz with the admin certificate until it answers 200 (bounded). */
export async function waitReady(gh: Gatehouse, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (!gh.proc.running) throw new Error(`gatehouse exited while waiting for /readyz\nstderr: ${gh.proc.stderr}`);
    const r = await gh.admin.request('GET', '/readyz?verbose').catch((err: unknown) => ({ status: 0, text: String(err) }));
    if (r.status === 200) return;
    last = `${r.status} ${r.text}`;
    if (Date.now() > deadline) throw new Error(`/readyz never answered 200; last answer: ${last}\nstderr: ${gh.proc.stderr}`);
    await sleep(100);
  }
}

// ---- kubectl ----

function kubectlDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'kubectl');
    if (existsSync(candidate)) return dirname(realpathSync(candidate));
  }
  return undefined;
}

/** The path of the machine's kubectl (version undefined) or of `kubectl.<version>` beside it; undefined if missing. */
export function findKubectl(version?: string): string | undefined {
  const dir = kubectlDir();
  if (!dir) return undefined;
  const candidate = join(dir, version ? `kubectl.${version}` : 'kubectl');
  return existsSync(candidate) ? candidate : undefined;
}

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** kubectl bound to one kubeconfig, with a private HOME and discovery cache. */
export class Kubectl {
  readonly home: string;
  constructor(
    readonly binary: string,
    readonly kubeconfig: string,
  ) {
    this.home = tempDir('kubectl-home');
  }

  private argv(args: readonly string[]): string[] {
    return ['--kubeconfig', this.kubeconfig, '--cache-dir', join(this.home, 'cache'), ...args];
  }

  private env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: this.home };
    delete env.KUBECONFIG;
    return env;
  }

  /** Runs kubectl to completion; `input` goes to stdin. */
  async run(args: readonly string[], input?: string, timeoutMs = 60_000): Promise<KubectlResult> {
    const p = spawnTracked(this.binary, this.argv(args), { env: this.env() });
    p.child.stdin?.end(input ?? '');
    const { code } = await p.waitExit(timeoutMs);
    return { code, stdout: p.stdout, stderr: p.stderr };
  }

  /** Runs kubectl and throws with its stderr unless it exits 0; returns stdout. */
  async ok(args: readonly string[], input?: string): Promise<string> {
    const r = await this.run(args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** Starts a long-running kubectl (e.g. `get -w`); stop it with proc.kill(). */
  spawn(args: readonly string[]): Proc {
    const p = spawnTracked(this.binary, this.argv(args), { env: this.env() });
    p.child.stdin?.end();
    return p;
  }
}
