import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { type DevPkiPaths, ensureDevPki } from '../../certs/devpki.js';

const root = mkdtempSync(join(tmpdir(), 'gatehouse-devpki-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = (): string => join(root, `data${n++}`);

function snapshot(paths: DevPkiPaths): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(paths.dir)) out[f] = readFileSync(join(paths.dir, f), 'utf8');
  out['admin.kubeconfig'] = readFileSync(paths.kubeconfig, 'utf8');
  return out;
}

const cert = (path: string): X509Certificate => new X509Certificate(readFileSync(path));

describe('ensureDevPki', () => {
  it('creates every piece on first start', async () => {
    const paths = await ensureDevPki(freshDir(), { host: '127.0.0.1', port: 6443 });
    assert.deepEqual(readdirSync(paths.dir).sort(), [
      'admin.crt',
      'admin.key',
      'apiserver.crt',
      'apiserver.key',
      'ca.crt',
      'ca.key',
      'front-proxy-ca.crt',
      'front-proxy-ca.key',
      'front-proxy-client.crt',
      'front-proxy-client.key',
      'sa.key',
      'sa.pub',
    ]);
    const ca = cert(paths.caCert);
    assert.ok(cert(paths.servingCert).checkIssued(ca));
    assert.equal(cert(paths.adminCert).subject, 'O=system:masters\nCN=admin');
    assert.equal(cert(paths.frontProxyClientCert).subject, 'CN=front-proxy-client');
    assert.ok(cert(paths.frontProxyClientCert).checkIssued(cert(paths.frontProxyCaCert)));
    assert.equal(cert(paths.frontProxyClientCert).checkIssued(ca), false);
  });

  it('writes private keys with mode 0600 and leaves no temp files', async () => {
    const paths = await ensureDevPki(freshDir(), { host: '127.0.0.1', port: 6443 });
    for (const f of [
      paths.caKey,
      paths.servingKey,
      paths.adminKey,
      paths.frontProxyCaKey,
      paths.frontProxyClientKey,
      paths.serviceAccountKey,
      paths.kubeconfig,
    ]) {
      assert.equal(statSync(f).mode & 0o777, 0o600, f);
    }
    assert.equal(readdirSync(paths.dir).filter((f) => f.includes('.tmp-')).length, 0);
  });

  it('writes an admin kubeconfig with embedded credentials', async () => {
    const paths = await ensureDevPki(freshDir(), { host: '::1', port: 7443 });
    const kc = parse(readFileSync(paths.kubeconfig, 'utf8')) as {
      clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
      users: { name: string; user: Record<string, string> }[];
      contexts: { name: string; context: { cluster: string; user: string } }[];
      'current-context': string;
    };
    assert.equal(kc.clusters[0]!.cluster.server, 'https://[::1]:7443');
    assert.equal(Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString(), readFileSync(paths.caCert, 'utf8'));
    assert.equal(Buffer.from(kc.users[0]!.user['client-certificate-data']!, 'base64').toString(), readFileSync(paths.adminCert, 'utf8'));
    assert.equal(Buffer.from(kc.users[0]!.user['client-key-data']!, 'base64').toString(), readFileSync(paths.adminKey, 'utf8'));
    assert.deepEqual(kc.contexts[0], { name: 'admin@gatehouse', context: { cluster: 'gatehouse', user: 'admin' } });
    assert.equal(kc['current-context'], 'admin@gatehouse');
  });

  it('is idempotent: a second call changes nothing', async () => {
    const dir = freshDir();
    const paths = await ensureDevPki(dir, { host: '127.0.0.1', port: 6443, sans: ['gh.example'] });
    const first = snapshot(paths);
    const mtime = statSync(paths.caCert).mtimeMs;
    await ensureDevPki(dir, { host: '127.0.0.1', port: 6443, sans: ['gh.example'] });
    assert.deepEqual(snapshot(paths), first);
    assert.equal(statSync(paths.caCert).mtimeMs, mtime);
  });

  it('regenerates only a missing leaf, keeping the CA and the other pieces', async () => {
    const dir = freshDir();
    const paths = await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    const first = snapshot(paths);
    unlinkSync(paths.servingKey);
    unlinkSync(paths.serviceAccountPub);
    await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    const second = snapshot(paths);
    assert.notEqual(second['apiserver.crt'], first['apiserver.crt']);
    assert.notEqual(second['apiserver.key'], first['apiserver.key']);
    for (const f of ['ca.crt', 'ca.key', 'admin.crt', 'admin.key', 'sa.key', 'sa.pub', 'front-proxy-ca.crt', 'admin.kubeconfig']) {
      assert.equal(second[f], first[f], f);
    }
    assert.ok(cert(paths.servingCert).checkIssued(cert(paths.caCert)));
  });

  it('reissues the serving certificate when a new host is asked for', async () => {
    const dir = freshDir();
    const paths = await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    const ca = readFileSync(paths.caCert, 'utf8');
    await ensureDevPki(dir, { host: '192.0.2.10', port: 6443 });
    assert.equal(cert(paths.servingCert).checkIP('192.0.2.10'), '192.0.2.10');
    assert.equal(readFileSync(paths.caCert, 'utf8'), ca);
  });

  it('never overwrites a CA whose key is missing', async () => {
    const dir = freshDir();
    const paths = await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    const ca = readFileSync(paths.caCert, 'utf8');
    unlinkSync(paths.caKey);
    await assert.rejects(ensureDevPki(dir, { host: '127.0.0.1', port: 6443 }), /^Error: incomplete CA: ".*ca\.crt" exists but ".*ca\.key" is missing/);
    assert.equal(readFileSync(paths.caCert, 'utf8'), ca);
  });

  it('replaces a corrupt leaf instead of failing', async () => {
    const dir = freshDir();
    const paths = await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    writeFileSync(paths.adminCert, 'garbage');
    await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    assert.equal(cert(paths.adminCert).subject, 'O=system:masters\nCN=admin');
  });

  it('chains are accepted by openssl verify', async () => {
    const paths = await ensureDevPki(freshDir(), { host: '127.0.0.1', port: 6443 });
    for (const [ca, leaf] of [
      [paths.caCert, paths.servingCert],
      [paths.caCert, paths.adminCert],
      [paths.frontProxyCaCert, paths.frontProxyClientCert],
    ] as const) {
      const r = spawnSync('openssl', ['verify', '-CAfile', ca, leaf], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    }
  });
});

describe('ensureDevPki under concurrency', () => {
  it('two concurrent first starts end with one CA that signed every leaf', async () => {
    const dir = freshDir();
    const results = await Promise.allSettled([ensureDevPki(dir, { host: '127.0.0.1', port: 6443 }), ensureDevPki(dir, { host: '127.0.0.1', port: 6443 })]);
    // One may lose the race for the CA files and say so; it must not have replaced them.
    for (const r of results) if (r.status === 'rejected') assert.match(String(r.reason), /another process is initialising the same directory|incomplete CA/);
    const paths = await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    const ca = cert(paths.caCert);
    assert.ok(cert(paths.servingCert).checkIssued(ca) && cert(paths.servingCert).verify(ca.publicKey));
    assert.ok(cert(paths.adminCert).checkIssued(ca) && cert(paths.adminCert).verify(ca.publicKey));
    assert.equal(readdirSync(paths.dir).filter((f) => f.includes('.tmp-')).length, 0);
  });
});
