// The dev PKI created on first start under <dataDir>/pki, plus an admin
// kubeconfig, so that `kubectl --kubeconfig data/admin.kubeconfig` works at once.
// Later starts reuse what exists: only missing (or unusable) leaves are
// regenerated, and a CA is never overwritten — replacing it would silently
// invalidate every certificate and kubeconfig handed out before.
import { X509Certificate, createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { renderKubeconfig, serverUrl } from './kubeconfig.js';
import type { CertKeyPair } from './pki.js';

// The issuing code is imported only when something is issued: a start that finds its PKI in place never loads it.
const issuer = () => import('./pki.js');

export interface DevPkiOptions {
  /** The address clients use (the bind address); also added to the serving cert. */
  host: string;
  port: number;
  /** Extra DNS names / IPs for the serving certificate. */
  sans?: readonly string[];
  /** The clock, injected for tests. */
  now?: () => Date;
}

export interface DevPkiPaths {
  dir: string;
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  kubeconfig: string;
}

export const ADMIN_USER = 'admin';
export const ADMIN_GROUP = 'system:masters';

export function devPkiPaths(dataDir: string): DevPkiPaths {
  const dir = join(dataDir, 'pki');
  const p = (f: string): string => join(dir, f);
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    servingCert: p('apiserver.crt'),
    servingKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    frontProxyCaCert: p('front-proxy-ca.crt'),
    frontProxyCaKey: p('front-proxy-ca.key'),
    frontProxyClientCert: p('front-proxy-client.crt'),
    frontProxyClientKey: p('front-proxy-client.key'),
    serviceAccountKey: p('sa.key'),
    serviceAccountPub: p('sa.pub'),
    kubeconfig: join(dataDir, 'admin.kubeconfig'),
  };
}

export async function ensureDevPki(dataDir: string, opts: DevPkiOptions): Promise<DevPkiPaths> {
  const paths = devPkiPaths(dataDir);
  const now = opts.now ?? (() => new Date());
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });

  const ca = await ensureCa(paths.caCert, paths.caKey, async () => (await issuer()).generateCa('gatehouse-ca', { now: now() }));
  const hosts = servingHosts(opts);
  await ensureLeaf(
    paths.servingCert,
    paths.servingKey,
    ca,
    now,
    (x) => hosts.every((h) => covers(x, h)),
    async () => (await issuer()).generateServingCert(ca, { hosts, now: now() }),
  );
  const admin = await ensureLeaf(
    paths.adminCert,
    paths.adminKey,
    ca,
    now,
    (x) => x.subject === `O=${ADMIN_GROUP}\nCN=${ADMIN_USER}`,
    async () => (await issuer()).generateClientCert(ca, { user: ADMIN_USER, groups: [ADMIN_GROUP], now: now() }),
  );
  const frontCa = await ensureCa(paths.frontProxyCaCert, paths.frontProxyCaKey, async () => (await issuer()).generateFrontProxyCa({ now: now() }));
  await ensureLeaf(
    paths.frontProxyClientCert,
    paths.frontProxyClientKey,
    frontCa,
    now,
    () => true,
    async () => (await issuer()).generateFrontProxyClientCert(frontCa, { now: now() }),
  );
  await ensureServiceAccountKeys(paths.serviceAccountKey, paths.serviceAccountPub);

  // The kubeconfig is derived data: rewritten only when its content would change (new admin cert, new port).
  const kubeconfig = renderKubeconfig({
    server: serverUrl(opts.host, opts.port),
    caPem: ca.certPem,
    clientCertPem: admin.certPem,
    clientKeyPem: admin.keyPem,
  });
  if ((await readOptional(paths.kubeconfig)) !== kubeconfig) await writeFileAtomic(paths.kubeconfig, kubeconfig, 0o600);
  return paths;
}

/**
 * Writes through a temp file in the same directory and renames it, so a crash never leaves half a key.
 * `exclusive` links instead of renaming: it fails with EEXIST rather than replace a file that
 * appeared meanwhile (two processes initialising one directory must not swap CAs under each other).
 */
export async function writeFileAtomic(path: string, data: string, mode: number, opts: { exclusive?: boolean } = {}): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fh = await open(tmp, 'wx', mode);
  try {
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (opts.exclusive) await link(tmp, path);
    else await rename(tmp, path);
  } finally {
    // After a rename the temp name is already gone; after a link or a failure it is removed here.
    await rm(tmp, { force: true });
  }
}

export async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function ensureCa(certPath: string, keyPath: string, generate: () => Promise<CertKeyPair>): Promise<CertKeyPair> {
  const [certPem, keyPem] = await Promise.all([readOptional(certPath), readOptional(keyPath)]);
  if (certPem !== undefined && keyPem !== undefined) return { certPem, keyPem };
  if (certPem !== undefined || keyPem !== undefined) {
    const [have, missing] = certPem !== undefined ? [certPath, keyPath] : [keyPath, certPath];
    throw new Error(`incomplete CA: "${have}" exists but "${missing}" is missing: restore it or remove both to create a new CA`);
  }
  const ca = await generate();
  try {
    await writeFileAtomic(keyPath, ca.keyPem, 0o600, { exclusive: true });
    await writeFileAtomic(certPath, ca.certPem, 0o644, { exclusive: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    throw new Error(`CA files appeared while creating "${certPath}": another process is initialising the same directory`);
  }
  return ca;
}

/** Keeps an existing leaf if it was issued by `ca`, is still valid and passes `fits`; otherwise issues a new one. */
async function ensureLeaf(
  certPath: string,
  keyPath: string,
  ca: CertKeyPair,
  now: () => Date,
  fits: (cert: X509Certificate) => boolean,
  generate: () => Promise<CertKeyPair>,
): Promise<CertKeyPair> {
  const [certPem, keyPem] = await Promise.all([readOptional(certPath), readOptional(keyPath)]);
  if (certPem !== undefined && keyPem !== undefined && usable(certPem, keyPem, ca, now(), fits)) return { certPem, keyPem };
  const leaf = await generate();
  await writePair(certPath, keyPath, leaf);
  return leaf;
}

function usable(certPem: string, keyPem: string, ca: CertKeyPair, now: Date, fits: (cert: X509Certificate) => boolean): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const issuer = new X509Certificate(ca.certPem);
    const t = now.getTime();
    return (
      cert.checkIssued(issuer) &&
      cert.verify(issuer.publicKey) &&
      cert.checkPrivateKey(createPrivateKey(keyPem)) &&
      Date.parse(cert.validTo) > t &&
      Date.parse(cert.validFrom) <= t &&
      fits(cert)
    );
  } catch {
    // An unreadable or corrupt leaf is replaced, not fatal: leaves are cheap and nothing else depends on their identity.
    return false;
  }
}

export async function ensureServiceAccountKeys(keyPath: string, pubPath: string): Promise<void> {
  const [keyPem, pubPem] = await Promise.all([readOptional(keyPath), readOptional(pubPath)]);
  if (keyPem !== undefined) {
    // The private key is the identity (tokens already issued verify against it); a lost public half is derived again.
    if (pubPem === undefined) {
      const pub = createPublicKey(keyPem).export({ type: 'spki', format: 'pem' }).toString();
      await writeFileAtomic(pubPath, pub, 0o644);
    }
    return;
  }
  const pair = (await issuer()).generateServiceAccountKeyPair();
  await writeFileAtomic(keyPath, pair.privateKeyPem, 0o600);
  await writeFileAtomic(pubPath, pair.publicKeyPem, 0o644);
}

async function writePair(certPath: string, keyPath: string, pair: CertKeyPair): Promise<void> {
  await writeFileAtomic(keyPath, pair.keyPem, 0o600);
  await writeFileAtomic(certPath, pair.certPem, 0o644);
}

function servingHosts(opts: DevPkiOptions): string[] {
  const host = opts.host.replace(/^\[(.*)\]$/, '$1');
  // 0.0.0.0 / :: are bind addresses, never names a client dials.
  const extra = host === '' || host === '0.0.0.0' || host === '::' ? [] : [host];
  return [...extra, ...(opts.sans ?? [])];
}

function covers(cert: X509Certificate, host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1');
  return isIP(h) ? cert.checkIP(h) !== undefined : cert.checkHost(h) !== undefined;
}
