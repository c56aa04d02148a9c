// The setup bench/sidecar.ts and bench/forwardauth.ts share: a CA with a
// serving and a client certificate, one child process holding the plain HTTP
// upstream (a ~250-byte JSON body), the HTTPS review answerer (every
// TokenReview is bench-user in bench, every SubjectAccessReview allowed) and
// the bare node:https server (forward auth's allowed headers, else the
// upstream's body; the same certificate, `requestCert` against the same CA),
// and `gatehouse serve --upstream=…` processes started against them.
// BENCH_SIDECAR_PROF=<dir>: each sidecar writes a V8 CPU profile there when
// the rig closes (`node --cpu-prof`; SIGTERM ends it cleanly).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCa, generateClientCert, generateServingCert } from '../certs/pki.js';
import type { Target } from './rawclient.js';
import { freePort } from './procs.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

const CHILD = `
const http = require('node:http'), https = require('node:https');
const [upPort, sarPort, barePort] = process.argv.slice(1).map(Number);
const { SAR_CERT: cert, SAR_KEY: key, CA: ca } = process.env;
const body = JSON.stringify({ kind: 'ItemList', items: [{ name: 'a', value: 'x'.repeat(200) }] });
const items = (req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); };
http.createServer(items).listen(upPort, '127.0.0.1');
https.createServer({ cert, key }, (req, res) => {
  const chunks = []; req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const r = JSON.parse(Buffer.concat(chunks).toString());
    r.status = r.kind === 'TokenReview' ? { authenticated: true, user: { username: 'bench-user', groups: ['bench'] } } : { allowed: true };
    res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(r));
  });
}).listen(sarPort, '127.0.0.1');
const allowed = ['X-Remote-User', 'bench-user', 'X-Remote-Group', 'bench', 'X-Remote-Group', 'system:authenticated',
  'X-Auth-Request-User', 'bench-user', 'X-Auth-Request-Groups', 'bench,system:authenticated', 'Cache-Control', 'no-cache, private', 'Content-Length', '0'];
https.createServer({ cert, key, ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
  if (req.url.startsWith('/gatehouse/forward-auth')) { req.resume(); res.writeHead(200, allowed); res.end(); } else items(req, res);
}).listen(barePort, '127.0.0.1', () => process.send && process.send('up'));
`;

export interface Sidecar {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly target: Target;
}

export interface SidecarRig {
  readonly upPort: number;
  /** The bare node:https server, with the client certificate. */
  readonly bare: Target;
  /** `gatehouse serve --upstream` from `root` (default this build), reviews by the answerer, plus `extra` flags. */
  sidecar(name: string, extra?: readonly string[], root?: string): Promise<Sidecar>;
  /** A floor server of bench/fafloor.mjs (`https`, `h2compat`, `h2compat-async`) in a process of its own. */
  floor(variant: string): Promise<Sidecar>;
  close(): Promise<void>;
}

function started(p: ChildProcess, what: string, pattern: RegExp): Promise<void> {
  return new Promise((res, rej) => {
    let out = '';
    p.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      if (pattern.test(out)) res();
    });
    p.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    p.once('exit', (code) => rej(new Error(`${what} exited (${code}): ${out}`)));
  });
}

/** The client certificate's user: the sidecar bench authenticates by it, forward auth by the token. */
export async function startSidecarRig(clientUser: { user: string; groups?: string[] }): Promise<SidecarRig> {
  const dir = await mkdtemp(join(tmpdir(), 'gh-bench-sidecar-'));
  const ca = generateCa('bench-sidecar-ca');
  const serving = generateServingCert(ca, { commonName: 'localhost' });
  const client = generateClientCert(ca, clientUser);
  const files = { ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), kubeconfig: join(dir, 'reviews.kubeconfig') };
  const [upPort, sarPort, barePort] = [await freePort(), await freePort(), await freePort()];
  await Promise.all([writeFile(files.ca, ca.certPem), writeFile(files.cert, serving.certPem), writeFile(files.key, serving.keyPem)]);
  await writeFile(
    files.kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${sarPort}/`, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  const children: ChildProcess[] = [];
  const child = spawn(process.execPath, ['-e', CHILD, String(upPort), String(sarPort), String(barePort)], {
    env: { ...process.env, SAR_CERT: serving.certPem, SAR_KEY: serving.keyPem, CA: ca.certPem },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  await new Promise((r) => child.once('message', r));
  const target = (port: number): Target => ({ port, ca: ca.certPem, cert: client.certPem, key: client.keyPem });
  const prof = process.env['BENCH_SIDECAR_PROF'];
  const sidecars: ChildProcess[] = [];

  return {
    upPort,
    bare: target(barePort),
    async sidecar(name, extra = [], root = ROOT) {
      const port = await freePort();
      const proc = spawn(
        process.execPath,
        [
          ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`, `--cpu-prof-name=${name}.cpuprofile`] : []),
          join(root, 'bin', 'gatehouse.js'),
          'serve',
          `--upstream=http://127.0.0.1:${upPort}/`,
          `--secure-port=${port}`,
          `--data-dir=${join(dir, name)}`,
          `--tls-cert-file=${files.cert}`,
          `--tls-private-key-file=${files.key}`,
          `--client-ca-file=${files.ca}`,
          `--authentication-token-webhook-config-file=${files.kubeconfig}`,
          `--authorization-webhook-config-file=${files.kubeconfig}`,
          ...extra,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } },
      );
      children.push(proc);
      sidecars.push(proc);
      await started(proc, `sidecar ${name}`, /sidecar is serving/);
      return { name, proc, pid: proc.pid!, target: target(port) };
    },
    async floor(variant) {
      const port = await freePort();
      const proc = spawn(process.execPath, [join(ROOT, 'bench', 'fafloor.mjs'), variant, String(port)], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CERT: serving.certPem, KEY: serving.keyPem, CA: ca.certPem },
      });
      children.push(proc);
      await started(proc, `floor ${variant}`, /up/);
      return { name: variant, proc, pid: proc.pid!, target: target(port) };
    },
    async close() {
      // A profiled sidecar is stopped by SIGTERM (its graceful end writes the profile), the rest killed.
      const ends = sidecars.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : Promise.resolve()));
      if (prof) for (const p of sidecars) p.kill('SIGTERM');
      else for (const p of children) p.kill('SIGKILL');
      if (prof) await Promise.race([Promise.all(ends), new Promise((r) => setTimeout(r, 90_000))]);
      for (const p of children) if (p.exitCode === null) p.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
