import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { ServerResponse } from 'node:http';
import { stringify } from 'yaml';
import { generateCa, generateClientCert } from '../../certs/pki.js';
import { clientFromKubeconfig, ClientRequestError, type KubeClient } from '../../lib/kubeconfig/index.js';
import { sendJson, startHttpsPeer, writeExecPlugin, type HttpsPeer, type PeerRequest } from '../authn/fixtures.js';

const V1 = 'client.authentication.k8s.io/v1';
const V1BETA1 = 'client.authentication.k8s.io/v1beta1';
const clientCa = generateCa('exec-client-ca');
const alice = generateClientCert(clientCa, { user: 'alice' });
const bob = generateClientCert(clientCa, { user: 'bob' });

let peer: HttpsPeer;
let dir = '';
let client: KubeClient | undefined;

const echo = (r: PeerRequest, res: ServerResponse) => sendJson(res, 200, { auth: r.headers.authorization ?? null, cn: r.clientCn ?? null });
before(async () => {
  peer = await startHttpsPeer(echo, { clientCa });
});
after(() => peer.close());
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-exec-'));
  peer.handler = echo;
  peer.requests.length = 0;
});
afterEach(async () => {
  client?.close();
  client = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function clientWith(
  exec: Record<string, unknown>,
  answers: unknown[],
  opts: { clock?: () => number; cluster?: Record<string, unknown> } = {},
): Promise<KubeClient> {
  await writeExecPlugin(dir, answers);
  const file = join(dir, 'kubeconfig');
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'c',
      clusters: [
        { name: 'peer', cluster: { server: peer.url, 'certificate-authority-data': Buffer.from(peer.ca.certPem).toString('base64'), ...opts.cluster } },
      ],
      users: [{ name: 'u', user: { exec: { apiVersion: V1, command: './plugin.mjs', interactiveMode: 'Never', ...exec } } }],
      contexts: [{ name: 'c', context: { cluster: 'peer', user: 'u' } }],
    }),
  );
  client = await clientFromKubeconfig(file, { timeoutMs: 5000, ...(opts.clock ? { clock: opts.clock } : {}) });
  return client;
}

const runs = async () => (existsSync(join(dir, 'runs')) ? Number(await readFile(join(dir, 'runs'), 'utf8')) : 0);
const info = async (n: number) => JSON.parse(await readFile(join(dir, `info-${n}.json`), 'utf8'));
const cred = (apiVersion: string, status: Record<string, unknown>) => ({ apiVersion, kind: 'ExecCredential', status });
const body = (r: { body: Buffer }) => JSON.parse(r.body.toString('utf8'));

describe('exec credential plugins', () => {
  it('sends the token a plugin prints and runs the plugin once for many requests', async () => {
    const c = await clientWith({}, [cred(V1, { token: 'tok-1' })]);
    assert.equal(body(await c.request('GET', '/a')).auth, 'Bearer tok-1');
    assert.equal(body(await c.request('GET', '/b')).auth, 'Bearer tok-1');
    assert.equal(await runs(), 1);
  });

  it('gives the plugin KUBERNETES_EXEC_INFO without cluster info unless asked', async () => {
    const c = await clientWith({}, [cred(V1, { token: 't' })]);
    await c.request('GET', '/');
    assert.deepEqual(await info(1), { apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false } });
  });

  it('passes spec.cluster with the exec extension as config when provideClusterInfo is set', async () => {
    const c = await clientWith({ provideClusterInfo: true, apiVersion: V1BETA1 }, [cred(V1BETA1, { token: 't' })], {
      cluster: { extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'gatehouse', region: 'eu' } }] },
    });
    await c.request('GET', '/');
    const i = await info(1);
    assert.equal(i.apiVersion, V1BETA1);
    assert.equal(i.spec.interactive, false);
    assert.equal(i.spec.cluster.server, peer.url);
    assert.equal(Buffer.from(i.spec.cluster['certificate-authority-data'], 'base64').toString(), peer.ca.certPem);
    assert.deepEqual(i.spec.cluster.config, { audience: 'gatehouse', region: 'eu' });
  });

  it('runs the plugin again after a 401 and retries the request with the new token', async () => {
    const c = await clientWith({}, [cred(V1, { token: 'old' }), cred(V1, { token: 'new' })]);
    peer.handler = (r, res) =>
      r.headers.authorization === 'Bearer new' ? sendJson(res, 200, { ok: true }) : sendJson(res, 401, { kind: 'Status', code: 401 });
    const reply = await c.request('GET', '/');
    assert.equal(reply.status, 200);
    assert.equal(await runs(), 2);
    assert.deepEqual(
      peer.requests.map((r) => r.headers.authorization),
      ['Bearer old', 'Bearer new'],
    );
  });

  it('keeps a credential until its expirationTimestamp', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const c = await clientWith({}, [cred(V1, { token: 'a', expirationTimestamp: '2030-01-01T00:10:00Z' }), cred(V1, { token: 'b' })], { clock: () => now });
    assert.equal(body(await c.request('GET', '/')).auth, 'Bearer a');
    now += 9 * 60_000;
    assert.equal(body(await c.request('GET', '/')).auth, 'Bearer a');
    now += 2 * 60_000;
    assert.equal(body(await c.request('GET', '/')).auth, 'Bearer b');
    assert.equal(await runs(), 2);
  });

  it('uses a client certificate from the plugin, and a new certificate forces a new connection', async () => {
    const c = await clientWith({}, [
      cred(V1, { clientCertificateData: alice.certPem, clientKeyData: alice.keyPem }),
      cred(V1, { clientCertificateData: bob.certPem, clientKeyData: bob.keyPem }),
    ]);
    peer.handler = (r, res) => (r.clientCn === 'bob' ? sendJson(res, 200, { cn: r.clientCn }) : sendJson(res, 401, { cn: r.clientCn }));
    const reply = await c.request('GET', '/');
    assert.equal(reply.status, 200);
    assert.deepEqual(
      peer.requests.map((r) => r.clientCn),
      ['alice', 'bob'],
    );
  });

  it('refuses interactiveMode Always without running the plugin', async () => {
    const c = await clientWith({ interactiveMode: 'Always' }, [cred(V1, { token: 't' })]);
    await assert.rejects(
      c.request('GET', '/'),
      (err: unknown) => err instanceof ClientRequestError && err.code === 'credentials' && /needs standard input/.test(err.message),
    );
    assert.equal(await runs(), 0);
    assert.equal(peer.requests.length, 0);
  });

  const badOutputs: Array<[string, unknown, RegExp]> = [
    ['output that is not JSON', 'hello', /not JSON/],
    ['another apiVersion', cred(V1BETA1, { token: 't' }), /does not match the configured/],
    ['a certificate without a key', cred(V1, { clientCertificateData: alice.certPem }), /must come together/],
    ['an empty status', cred(V1, {}), /neither token nor clientCertificateData/],
    ['a bad expirationTimestamp', cred(V1, { token: 't', expirationTimestamp: 'tomorrow' }), /not an RFC 3339 time/],
  ];
  for (const [what, out, message] of badOutputs) {
    it(`fails the request when the plugin prints ${what}`, async () => {
      const c = await clientWith({}, [out]);
      await assert.rejects(c.request('GET', '/'), (err: unknown) => err instanceof ClientRequestError && message.test(err.message));
      assert.equal(peer.requests.length, 0);
    });
  }

  it('reports a plugin that cannot be found', async () => {
    const c = await clientWith({ command: './missing-plugin', installHint: 'install it from the wiki' }, [cred(V1, { token: 't' })]);
    await assert.rejects(c.request('GET', '/'), /cannot run: ENOENT: install it from the wiki/);
  });

  it('kills a plugin that does not finish within the exec timeout', async () => {
    await clientWith({}, [cred(V1, { token: 't' })]);
    await writeFile(join(dir, 'plugin.mjs'), `#!${process.execPath}\nsetInterval(() => {}, 1000);\n`);
    const slow = await clientFromKubeconfig(join(dir, 'kubeconfig'), { timeoutMs: 5000, execTimeoutMs: 200 });
    try {
      await assert.rejects(
        slow.request('GET', '/'),
        (err: unknown) => err instanceof ClientRequestError && /killed by SIGKILL \(timeout\?\)/.test(err.message),
      );
      assert.equal(peer.requests.length, 0);
    } finally {
      slow.close();
    }
  });
});

describe('outbound requests', () => {
  it('time out when the server never answers', async () => {
    const c = await clientWith({}, [cred(V1, { token: 't' })]);
    peer.handler = () => undefined;
    const fast = await clientFromKubeconfig(join(dir, 'kubeconfig'), { timeoutMs: 200 });
    try {
      await assert.rejects(fast.request('GET', '/'), (err: unknown) => err instanceof ClientRequestError && err.code === 'timeout');
    } finally {
      fast.close();
    }
    void c;
  });
});
