// `gatehouse certs csr-kubeconfig`: the kubeconfig of a person or program whose
// CertificateSigningRequest was approved and issued — the certificate read from
// the API (with the admin kubeconfig, or another one that may get the request),
// the private key from the file that signed the request, the user name from the
// certificate's CN. The key never leaves the machine; nothing is signed here.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { request } from 'node:https';
import { parse as parseYaml } from 'yaml';
import { renderKubeconfig } from './kubeconfig.js';

export interface CsrKubeconfigInput {
  /** The kubeconfig the request is read with (its first cluster and user, `*-data` fields). */
  readonly kubeconfigText: string;
  readonly csrName: string;
  readonly keyPem: string;
  /** The server written into the new kubeconfig; default the reading kubeconfig's. */
  readonly server?: string;
}

interface Access {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

function field(obj: unknown, ...path: string[]): unknown {
  let v = obj;
  for (const p of path) v = v !== null && typeof v === 'object' && Object.hasOwn(v, p) ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

function accessOf(text: string): Access {
  const doc: unknown = parseYaml(text);
  const cluster = field(field(doc, 'clusters'), '0', 'cluster');
  const user = field(field(doc, 'users'), '0', 'user');
  const data = (v: unknown, what: string) => {
    if (typeof v !== 'string' || v === '') throw new Error(`the kubeconfig has no ${what} (only embedded *-data fields are read)`);
    return Buffer.from(v, 'base64').toString('utf8');
  };
  const server = field(cluster, 'server');
  if (typeof server !== 'string') throw new Error('the kubeconfig has no cluster server');
  return {
    server,
    caPem: data(field(cluster, 'certificate-authority-data'), 'certificate-authority-data'),
    certPem: data(field(user, 'client-certificate-data'), 'client-certificate-data'),
    keyPem: data(field(user, 'client-key-data'), 'client-key-data'),
  };
}

function getJson(a: Access, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, a.server);
    const req = request(url, { ca: a.caPem, cert: a.certPem, key: a.keyPem, headers: { accept: 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> });
        } catch {
          reject(new Error(`the server answered ${res.statusCode ?? 0} without JSON`));
        }
      });
    });
    req.setTimeout(30_000, () => req.destroy(new Error('the server did not answer within 30s')));
    req.on('error', reject);
    req.end();
  });
}

/** The new kubeconfig's text and its user name. */
export async function csrKubeconfig(i: CsrKubeconfigInput): Promise<{ text: string; user: string }> {
  const access = accessOf(i.kubeconfigText);
  const r = await getJson(access, `/apis/certificates.k8s.io/v1/certificatesigningrequests/${encodeURIComponent(i.csrName)}`);
  if (r.status !== 200) throw new Error(`reading the request "${i.csrName}": ${String(r.body['message'] ?? r.status)}`);
  const certificate = field(r.body, 'status', 'certificate');
  if (typeof certificate !== 'string' || certificate === '') {
    const conditions = field(r.body, 'status', 'conditions');
    const types = Array.isArray(conditions) ? conditions.map((c) => String(field(c, 'type'))).join(',') : '';
    throw new Error(`the request "${i.csrName}" has no certificate yet (conditions: ${types || 'none, pending approval'})`);
  }
  const certPem = Buffer.from(certificate, 'base64').toString('utf8');
  const cert = new X509Certificate(certPem);
  let key;
  try {
    key = createPrivateKey(i.keyPem);
  } catch {
    throw new Error('the key file is not a PEM private key');
  }
  if (!cert.checkPrivateKey(key)) throw new Error(`the key does not match the certificate of "${i.csrName}"`);
  const user = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? i.csrName;
  const text = renderKubeconfig({ server: i.server ?? access.server, caPem: access.caPem, clientCertPem: certPem, clientKeyPem: i.keyPem, userName: user });
  return { text, user };
}
