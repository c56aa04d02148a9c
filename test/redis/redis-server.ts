// A private redis-server on a spare loopback port for tests that stop, kill
// or reconfigure Redis. Started directly (no shell) so its pid is Redis's own;
// stopped by that pid. Every server started here is killed on process exit.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly config: string[],
    private readonly tls?: { ca: string },
  ) {
    this.url = `${tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`;
  }

  /** Starts redis-server with extra config (e.g. ['--appendonly', 'yes']) in a fresh directory. */
  static async start(config: string[] = [], port?: number, tls?: { ca: string }): Promise<RedisServer> {
    const s = new RedisServer(port ?? (await freePort()), mkdtempSync(join(tmpdir(), 'gh-redis-')), config, tls);
    await s.restart();
    return s;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** (Re)starts the server on the same port and directory; resolves once it answers PING. */
  async restart(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--daemonize', 'no', ...this.config],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.resume();
    child.stderr?.resume();
    live.add(child);
    this.child = child;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      const c = new Redis(this.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        ...(this.tls ? { tls: { ca: this.tls.ca } } : {}),
      });
      c.on('error', () => undefined);
      const ok = await c
        .connect()
        .then(() => c.ping())
        .then(
          () => true,
          () => false,
        );
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
  // spawnSync reports a missing binary as r.error; an async spawn's 'error' made once(child, 'exit') reject.
  const r = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  if (r.status === 0) return undefined;
  const reason = 'redis-server is not on PATH';
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: redis tests must run)`);
  console.log(`# skipping: ${reason}`);
  return reason;
}

/** Whether redis-cli (which creates a cluster) runs here; under CI=true its absence fails. */
export function redisCliSkipReason(): string | undefined {
  const r = spawnSync('redis-cli', ['--version'], { stdio: 'ignore' });
  if (r.status === 0) return undefined;
  const reason = 'redis-cli is not on PATH (needed to create a cluster)';
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: redis tests must run)`);
  console.log(`# skipping: ${reason}`);
  return reason;
}

/** Whether redis-server was built with TLS: it accepts tls-port and stops at the next, unknown directive. */
export async function redisServerHasTls(): Promise<boolean> {
  const child = spawn('redis-server', ['--port', '0', '--tls-port', '0', '--gh-tls-probe', 'x'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr?.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await Promise.race([once(child, 'exit'), once(child, 'error')]);
  clearTimeout(timer);
  return out.includes("'gh-tls-probe") && !out.includes("'tls-port");
}

/**
 * A private Redis Cluster of `masters` redis-server processes (no replicas) on spare
 * loopback ports, created with `redis-cli --cluster create`; stopped by pid.
 */
export class RedisCluster {
  private constructor(readonly nodes: RedisServer[]) {}

  /** Seeds as a cluster URL: redis://127.0.0.1:P1,127.0.0.1:P2,… */
  get url(): string {
    return `redis://${this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`;
  }

  static async start(masters = 3): Promise<RedisCluster> {
    const nodes: RedisServer[] = [];
    const cluster = new RedisCluster(nodes);
    try {
      for (let i = 0; i < masters; i++) {
        const port = await freePort();
        // The config file path is relative to the server's own fresh --dir.
        nodes.push(await RedisServer.start(['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--appendonly', 'no'], port));
      }
      const create = spawn('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      create.stdout?.on('data', (b: Buffer) => {
        out += b.toString();
      });
      create.stderr?.on('data', (b: Buffer) => {
        out += b.toString();
      });
      const [code] = (await once(create, 'exit')) as [number | null];
      if (code !== 0) throw new Error(`redis-cli --cluster create failed (${code}): ${out}`);
      const deadline = Date.now() + 20_000;
      for (const n of nodes) {
        for (;;) {
          const c = new Redis(n.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
          c.on('error', () => undefined);
          const info = await c
            .connect()
            .then(() => c.cluster('INFO') as Promise<string>)
            .catch(() => '');
          c.disconnect();
          if (/cluster_state:ok/.test(info)) break;
          if (Date.now() > deadline) throw new Error(`cluster node ${n.port} did not reach cluster_state:ok`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      return cluster;
    } catch (err) {
      await cluster.destroy();
      throw err;
    }
  }

  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.destroy()));
  }
}
