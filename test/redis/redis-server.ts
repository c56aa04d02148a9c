// A private redis-server on a spare loopback port for tests that stop, kill
// or reconfigure Redis. Started directly (no shell) so its pid is Redis's own;
// stopped by that pid. Every server started here is killed on process exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../e2e/helpers.js';

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

export class RedisServer {
  private child: ChildProcess | undefined;
  readonly url: string;

  private constructor(readonly port: number, readonly dir: string, private readonly config: string[]) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  /** Starts redis-server with extra config (e.g. ['--appendonly', 'yes']) in a fresh directory. */
  static async start(config: string[] = []): Promise<RedisServer> {
    const s = new RedisServer(await freePort(), mkdtempSync(join(tmpdir(), 'gh-redis-')), config);
    await s.restart();
    return s;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** (Re)starts the server on the same port and directory; resolves once it answers PING. */
  async restart(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--daemonize', 'no', ...this.config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.resume();
    child.stderr?.resume();
    live.add(child);
    this.child = child;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      const c = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => undefined);
      const ok = await c.connect().then(() => c.ping()).then(() => true, () => false);
      c.disconnect();
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not answer`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends a signal to the server's pid and waits for it to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    process.kill(child.pid!, signal);
    await exited;
    live.delete(child);
  }

  /** Stops the server (SIGKILL) and removes its directory. */
  async destroy(): Promise<void> {
    await this.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether redis-server can be started here; under CI=true its absence fails. */
export async function redisServerSkipReason(): Promise<string | undefined> {
  const child = spawn('redis-server', ['--version'], { stdio: 'ignore' });
  const [code] = (await Promise.race([once(child, 'exit'), once(child, 'error').then(() => [127])])) as [number | null];
  if (code === 0) return undefined;
  const reason = 'redis-server is not on PATH';
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: redis tests must run)`);
  console.log(`# skipping: ${reason}`);
  return reason;
}
