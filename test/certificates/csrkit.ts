// Helpers for the certificates tests: keys and PKCS#10 requests made by the
// real openssl, CertificateSigningRequest bodies, clients that present a
// certificate or impersonate a user, and kubectl with the admin kubeconfig.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devPkiPaths } from '../../certs/devpki.js';
import { HttpsClient } from '../helpers/client.js';
import type { TestServer } from '../helpers/server.js';

export const hasOpenssl = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
export const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

export const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

export interface KeyAndCsr {
  keyPem: string;
  csrPem: string;
}

export type KeySpec = 'rsa:2048' | 'rsa:1024' | 'ec:P-256' | 'ec:P-384' | 'ec:P-521' | 'ed25519' | 'dsa';

/** A new key and a request for `subject` (`/O=system:nodes/CN=system:node:n1`), with optional subjectAltName text. */
export function makeCsr(subject: string, key: KeySpec = 'ec:P-256', san?: string): KeyAndCsr {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-csr-'));
  try {
    const keyFile = join(dir, 'key.pem');
    let newkey: string[];
    if (key.startsWith('rsa:')) newkey = ['-newkey', key];
    else if (key.startsWith('ec:')) newkey = ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${key.slice(3)}`];
    else if (key === 'ed25519') newkey = ['-newkey', 'ed25519'];
    else {
      const params = join(dir, 'dsa.pem');
      execFileSync('openssl', ['genpkey', '-genparam', '-algorithm', 'DSA', '-pkeyopt', 'dsa_paramgen_bits:2048', '-out', params], { stdio: 'ignore' });
      newkey = ['-newkey', `dsa:${params}`];
    }
    const args = ['req', '-new', ...newkey, '-nodes', '-keyout', keyFile, '-subj', subject, ...(san ? ['-addext', `subjectAltName=${san}`] : [])];
    const csrPem = execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    return { keyPem: readFileSync(keyFile, 'utf8'), csrPem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function csrBody(name: string, csrPem: string, signerName: string, usages: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName, usages, ...extra },
  };
}

export const CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];

/** A client presenting `certPem`/`keyPem` to the server. */
export function certClient(s: TestServer, certPem: string, keyPem: string): HttpsClient {
  return new HttpsClient(s.url, { ca: readFileSync(devPkiPaths(s.dataDir).caCert, 'utf8'), cert: certPem, key: keyPem });
}

/** Headers for the admin to act as `user` in `groups`. */
export function asUser(user: string, groups: string[] = []): Record<string, string | string[]> {
  return { 'impersonate-user': user, ...(groups.length ? { 'impersonate-group': groups } : {}) };
}

/** The Approved condition a client adds before PUT …/approval (what kubectl certificate approve sends). */
export function withCondition(csr: Record<string, any>, type: 'Approved' | 'Denied', reason = 'Test'): Record<string, unknown> {
  const conditions = [...(csr.status?.conditions ?? []), { type, status: 'True', reason, message: `${type} by the test` }];
  return { ...csr, status: { ...(csr.status ?? {}), conditions } };
}

/** kubectl with the admin kubeconfig; asynchronous, as the server runs in this process. */
export async function kubectlAdmin(s: TestServer, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn('kubectl', ['--kubeconfig', s.kubeconfig, ...args], { env: { ...process.env, HOME: s.dataDir } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'close')) as [number];
  return { code, stdout, stderr };
}

export function writeTemp(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-csrfile-'));
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
