// Exec credential plugins (client.authentication.k8s.io v1 and v1beta1): runs
// the configured command with KUBERNETES_EXEC_INFO, reads one ExecCredential
// from its stdout, and caches it until its expirationTimestamp, until the
// server answers 401 (invalidate), or until the process exits. A server has
// no terminal: the plugin never gets stdin, and `interactiveMode: Always`
// fails without running anything.
import { spawn } from 'node:child_process';
import type { ClusterConfig, ExecConfig } from './load.js';
import { setOwn } from '../api/own.js';

export interface ExecCredential {
  readonly token?: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  /** ms since the epoch; absent = valid until a 401 or exit. */
  readonly expiresAt?: number;
}

export class ExecPluginError extends Error {}

export interface ExecOptions {
  clock?: () => number;
  timeoutMs?: number;
  log?: (msg: string) => void;
}

const MAX_OUTPUT = 1024 * 1024;

export class ExecCredentialProvider {
  private cached: ExecCredential | undefined;
  private running: Promise<ExecCredential> | undefined;
  private readonly clock: () => number;
  private readonly timeoutMs: number;
  /** How many times the plugin has run (for tests and metrics). */
  runs = 0;

  constructor(
    private readonly exec: ExecConfig,
    private readonly cluster: ClusterConfig,
    private readonly opts: ExecOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** The current credential, running the plugin when none is cached or it expired. Concurrent callers share one run. */
  async get(): Promise<ExecCredential> {
    const c = this.cached;
    if (c && (c.expiresAt === undefined || c.expiresAt > this.clock())) return c;
    this.cached = undefined;
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    const fresh = await this.running;
    this.cached = fresh;
    return fresh;
  }

  /** The server refused `used` (401): drop it so the next get() runs the plugin again. */
  invalidate(used: ExecCredential): void {
    if (this.cached === used) this.cached = undefined;
  }

  private execInfo(): string {
    const spec: Record<string, unknown> = { interactive: false };
    if (this.exec.provideClusterInfo) {
      const cl = this.cluster;
      spec['cluster'] = {
        server: cl.server,
        ...(cl.tlsServerName ? { 'tls-server-name': cl.tlsServerName } : {}),
        ...(cl.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}),
        ...(cl.caPem ? { 'certificate-authority-data': Buffer.from(cl.caPem, 'utf8').toString('base64') } : {}),
        ...(cl.execConfig !== undefined ? { config: cl.execConfig } : {}),
      };
    }
    return JSON.stringify({ apiVersion: this.exec.apiVersion, kind: 'ExecCredential', spec });
  }

  private run(): Promise<ExecCredential> {
    const ex = this.exec;
    if (ex.interactiveMode === 'Always') {
      return Promise.reject(new ExecPluginError(`exec plugin "${ex.command}" needs standard input (interactiveMode Always), which a server does not have`));
    }
    this.runs++;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of ex.env) setOwn(env, e.name, e.value);
    env['KUBERNETES_EXEC_INFO'] = this.execInfo();
    return new Promise((resolve, reject) => {
      const child = spawn(ex.command, [...ex.args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      // Not spawn's `timeout` option: Node leaves that timer running when the command cannot start (no 'exit'
      // comes), which held a short-lived process (a CLI, a test file) open for the whole timeout.
      const timer = setTimeout(() => child.kill('SIGKILL'), this.timeoutMs);
      const stop = () => clearTimeout(timer);
      child.once('exit', stop);
      const out: Buffer[] = [];
      let outSize = 0;
      let errText = '';
      let settled = false;
      const done = (err: Error | undefined, cred?: ExecCredential) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve(cred!);
      };
      child.stdout.on('data', (b: Buffer) => {
        outSize += b.length;
        if (outSize > MAX_OUTPUT) {
          child.kill('SIGKILL');
          done(new ExecPluginError(`exec plugin "${ex.command}": output larger than ${MAX_OUTPUT} bytes`));
          return;
        }
        out.push(b);
      });
      child.stderr.on('data', (b: Buffer) => {
        if (errText.length < 4096) errText += b.toString('utf8');
      });
      child.on('error', (err: NodeJS.ErrnoException) => {
        const hint = err.code === 'ENOENT' && ex.installHint ? `: ${ex.installHint}` : '';
        done(new ExecPluginError(`exec plugin "${ex.command}" cannot run: ${err.code ?? err.message}${hint}`));
      });
      child.on('close', (code, signal) => {
        stop();
        if (errText.trim()) this.opts.log?.(`exec plugin "${ex.command}" stderr: ${errText.trim().slice(0, 1024)}`);
        if (code !== 0) {
          done(
            new ExecPluginError(
              `exec plugin "${ex.command}" failed: ${signal ? `killed by ${signal}${signal === 'SIGKILL' ? ' (timeout?)' : ''}` : `exit code ${code}`}`,
            ),
          );
          return;
        }
        try {
          done(undefined, parseExecCredential(Buffer.concat(out).toString('utf8'), ex.apiVersion));
        } catch (err) {
          done(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
  }
}

/** Parses and checks a plugin's ExecCredential; throws ExecPluginError saying what is wrong (never echoing secrets). */
export function parseExecCredential(text: string, apiVersion: string): ExecCredential {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new ExecPluginError('exec plugin output is not JSON');
  }
  const o = v as Record<string, unknown> | null;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new ExecPluginError('exec plugin output is not a JSON object');
  if (o['kind'] !== 'ExecCredential') throw new ExecPluginError('exec plugin output: kind must be ExecCredential');
  if (o['apiVersion'] !== apiVersion)
    throw new ExecPluginError(`exec plugin output: apiVersion ${JSON.stringify(o['apiVersion'])} does not match the configured ${apiVersion}`);
  const s = o['status'] as Record<string, unknown> | undefined;
  if (typeof s !== 'object' || s === null) throw new ExecPluginError('exec plugin output: status is missing');
  const str = (k: string): string | undefined => {
    const x = s[k];
    if (x === undefined || x === null || x === '') return undefined;
    if (typeof x !== 'string') throw new ExecPluginError(`exec plugin output: status.${k} must be a string`);
    return x;
  };
  const token = str('token');
  const cert = str('clientCertificateData');
  const key = str('clientKeyData');
  if ((cert === undefined) !== (key === undefined)) throw new ExecPluginError('exec plugin output: clientCertificateData and clientKeyData must come together');
  if (token === undefined && cert === undefined) throw new ExecPluginError('exec plugin output: status has neither token nor clientCertificateData');
  const exp = str('expirationTimestamp');
  let expiresAt: number | undefined;
  if (exp !== undefined) {
    expiresAt = Date.parse(exp);
    if (!/^\d{4}-\d\d-\d\dT/.test(exp) || Number.isNaN(expiresAt))
      throw new ExecPluginError(`exec plugin output: status.expirationTimestamp "${exp}" is not an RFC 3339 time`);
  }
  return Object.freeze({
    ...(token !== undefined ? { token } : {}),
    ...(cert !== undefined ? { clientCertPem: cert, clientKeyPem: key! } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  });
}
