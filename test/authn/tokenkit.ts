// Helpers for the token-method tests: a bearer-token client against a test
// server, the real kubectl with --token, and hand-made JWTs for attacks.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createSign, sign as cryptoSign, createHmac, type KeyObject } from 'node:crypto';
import { devPkiPaths } from '../../certs/devpki.js';
import type { TestServer } from '../helpers/server.js';
import { HttpsClient, type Reply } from '../helpers/client.js';

export const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

/** GET (or other) with `Authorization: Bearer <token>`, over the server's CA, no client certificate. */
export async function withToken(s: TestServer, token: string, path = '/api/v1/namespaces', method = 'GET', body?: unknown): Promise<Reply> {
  const ca = await readFile(devPkiPaths(s.dataDir).caCert, 'utf8');
  const c = new HttpsClient(s.url, { ca });
  try {
    return await c.request(method, path, body, { authorization: `Bearer ${token}` });
  } finally {
    c.close();
  }
}

/** Who the server thinks the token is: SelfSubjectReview when served, else the name in a 403. */
export async function whoAmI(
  s: TestServer,
  token: string,
): Promise<{ status: number; username?: string; groups?: string[]; uid?: string; extra?: Record<string, string[]> }> {
  const r = await withToken(s, token, '/apis/authentication.k8s.io/v1/selfsubjectreviews', 'POST', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  if (r.status === 201 || r.status === 200) {
    const u = r.json.status.userInfo;
    return { status: r.status, username: u.username, groups: u.groups, uid: u.uid, extra: u.extra };
  }
  return { status: r.status };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real kubectl against the server with only --token (no kubeconfig, no client cert). */
export async function kubectl(s: TestServer, token: string | undefined, args: string[], kubeconfig?: string): Promise<KubectlResult> {
  const ca = devPkiPaths(s.dataDir).caCert;
  const base = kubeconfig ? ['--kubeconfig', kubeconfig] : ['--server', s.url, '--certificate-authority', ca];
  const child = spawn('kubectl', [...base, ...(token !== undefined ? [`--token=${token}`] : []), ...args], {
    env: { ...process.env, HOME: s.dataDir, KUBECONFIG: kubeconfig ?? '/dev/null' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const [code] = (await once(child, 'close')) as [number];
  return { code, stdout, stderr };
}

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** A compact JWS of arbitrary header and payload, signed with `key` by the alg the header names (none, HSxxx, RSxxx, ESxxx). */
export function makeJwt(header: Record<string, unknown> | string, payload: Record<string, unknown> | string, key?: KeyObject | Buffer): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const alg = typeof header === 'string' ? 'RS256' : String(header['alg']);
  let sig = '';
  if (alg.startsWith('HS'))
    sig = createHmac(`sha${alg.slice(2)}`, key as Buffer)
      .update(input)
      .digest('base64url');
  else if (alg.startsWith('RS'))
    sig = createSign(`sha${alg.slice(2)}`)
      .update(input)
      .sign(key as KeyObject)
      .toString('base64url');
  else if (alg.startsWith('ES'))
    sig = cryptoSign(`sha${alg.slice(2)}`, Buffer.from(input), { key: key as KeyObject, dsaEncoding: 'ieee-p1363' }).toString('base64url');
  return `${input}.${sig}`;
}
