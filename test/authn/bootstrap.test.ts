import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { parse as parseYaml } from 'yaml';
import { readFile } from 'node:fs/promises';
import { devPkiPaths } from '../../certs/devpki.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { hasKubectl, kubectl, whoAmI, withToken } from './tokenkit.js';
import { eventually } from '../helpers/eventually.js';

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

async function putToken(s: TestServer, id: string, secret: string, data: Record<string, string>, name = `bootstrap-token-${id}`): Promise<void> {
  const r = await s.admin.request('POST', '/api/v1/namespaces/kube-system/secrets', {
    metadata: { name },
    type: 'bootstrap.kubernetes.io/token',
    stringData: { 'token-id': id, 'token-secret': secret, ...data },
  });
  assert.equal(r.status, 201, r.text);
}

const secrets = '/api/v1/namespaces/kube-system/secrets';
const clusterInfo = '/api/v1/namespaces/kube-public/configmaps/cluster-info';

/** Verifies a detached JWS exactly as the spec tells a verifier to: payload base64url without padding between the dots, HS256 only, the whole token as key. */
async function verifyDetached(detached: string, content: string, token: string): Promise<void> {
  const [header, empty, signature] = detached.split('.');
  assert.equal(empty, '', 'the payload part of a detached JWS is empty');
  const payload = Buffer.from(content).toString('base64url');
  assert.doesNotMatch(payload, /=/);
  const jws = `${header}.${payload}.${signature}`;
  assert.equal(decodeProtectedHeader(jws).alg, 'HS256');
  const { payload: verified } = await compactVerify(jws, new TextEncoder().encode(token), { algorithms: ['HS256'] });
  assert.equal(new TextDecoder().decode(verified), content);
}

describe('bootstrap tokens', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--enable-bootstrap-token-auth', '--authorization-mode=AlwaysAllow'] });
    await putToken(s, 'abcdef', '0123456789abcdef', {
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
      'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
      expiration: rfc3339(Date.now() + 3_600_000),
      description: 'test token',
    });
  });
  after(async () => {
    await s?.close();
  });

  it('authenticates as system:bootstrap:<id> in system:bootstrappers and the extra groups', async () => {
    assert.equal((await withToken(s, 'abcdef.0123456789abcdef')).status, 200);
    const who = await whoAmI(s, 'abcdef.0123456789abcdef');
    if (who.username !== undefined) {
      assert.equal(who.username, 'system:bootstrap:abcdef');
      assert.deepEqual(who.groups, ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated']);
    }
  });

  it('works for kubectl --token', { skip: hasKubectl ? false : 'kubectl is not installed' }, async () => {
    const r = await kubectl(s, 'abcdef.0123456789abcdef', ['get', '--raw', '/api/v1/namespaces/kube-public']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).metadata.name, 'kube-public');
  });

  it('refuses a wrong secret, a bad format and an unknown id with 401', async () => {
    for (const t of ['abcdef.0123456789abcdee', 'ABCDEF.0123456789abcdef', 'abcdef.0123456789abcde', 'abcdef:0123456789abcdef', 'zzzzzz.0123456789abcdef']) {
      const r = await withToken(s, t);
      assert.equal(r.status, 401, t);
      assert.equal(r.json.reason, 'Unauthorized');
    }
  });

  it('refuses a token without usage-bootstrap-authentication, or with an extra group lacking the prefix', async () => {
    await putToken(s, 'nouse1', 'aaaaaaaaaaaaaaaa', { 'usage-bootstrap-signing': 'true' });
    assert.equal((await withToken(s, 'nouse1.aaaaaaaaaaaaaaaa')).status, 401);
    await putToken(s, 'group1', 'bbbbbbbbbbbbbbbb', { 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:masters' });
    assert.equal((await withToken(s, 'group1.bbbbbbbbbbbbbbbb')).status, 401);
    await putToken(s, 'group2', 'cccccccccccccccc', { 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:ok,evil' });
    assert.equal((await withToken(s, 'group2.cccccccccccccccc')).status, 401);
  });

  it('refuses a secret whose token-id disagrees with its name, or whose secret has a bad format', async () => {
    await putToken(s, 'other1', 'dddddddddddddddd', { 'usage-bootstrap-authentication': 'true' }, 'bootstrap-token-mixed1');
    assert.equal((await withToken(s, 'mixed1.dddddddddddddddd')).status, 401);
    await putToken(s, 'short1', 'DDDDDDDDDDDDDDDD', { 'usage-bootstrap-authentication': 'true' });
    assert.equal((await withToken(s, 'short1.DDDDDDDDDDDDDDDD')).status, 401);
  });

  it('the token cleaner deletes a token secret once its expiration passes', async () => {
    // The token works before it gets an expiration (with one 2 s ahead, a loaded machine could answer after it).
    await putToken(s, 'soon01', 'eeeeeeeeeeeeeeee', { 'usage-bootstrap-authentication': 'true' });
    assert.equal((await withToken(s, 'soon01.eeeeeeeeeeeeeeee')).status, 200);
    const expiring = await s.admin.request(
      'PATCH',
      `${secrets}/bootstrap-token-soon01`,
      { stringData: { expiration: rfc3339(Date.now() + 2000) } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(expiring.status, 200, expiring.text);
    await eventually('the cleaner', async () => (await s.admin.request('GET', `${secrets}/bootstrap-token-soon01`)).status === 404);
    assert.equal((await withToken(s, 'soon01.eeeeeeeeeeeeeeee')).status, 401);
    assert.ok(s.logs.some((l) => l.includes('deleted expired bootstrap token secret kube-system/bootstrap-token-soon01')));
  });

  it('cluster-info carries the kubeconfig with the CA and the server', async () => {
    let cm: Record<string, any> = {}; // eslint-disable-line @typescript-eslint/no-explicit-any
    await eventually('cluster-info', async () => {
      cm = (await s.admin.request('GET', clusterInfo)).json;
      return typeof cm.data?.['jws-kubeconfig-abcdef'] === 'string';
    });
    const kc = parseYaml(cm.data.kubeconfig);
    assert.equal(kc.kind, 'Config');
    assert.equal(kc.clusters[0].cluster.server, s.url);
    const ca = await readFile(devPkiPaths(s.dataDir).caCert, 'utf8');
    assert.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), ca);
  });

  it('signs cluster-info for each signing token, verified exactly as the spec says', async () => {
    const cm = (await s.admin.request('GET', clusterInfo)).json;
    await verifyDetached(cm.data['jws-kubeconfig-abcdef'], cm.data.kubeconfig, 'abcdef.0123456789abcdef');
    assert.equal(decodeProtectedHeader(cm.data['jws-kubeconfig-abcdef'].replace('..', '.e30.')).kid, 'abcdef');
    // A signing token whose secret does not match fails verification.
    await assert.rejects(verifyDetached(cm.data['jws-kubeconfig-abcdef'], cm.data.kubeconfig, 'abcdef.0123456789abcdee'));
    // nouse1 signs too (usage-bootstrap-signing without authentication); tokens without the signing usage do not.
    assert.equal(typeof cm.data['jws-kubeconfig-nouse1'], 'string');
    assert.equal(cm.data['jws-kubeconfig-group1'], undefined);
  });

  it('keeps signatures current as tokens and the kubeconfig change', async () => {
    await putToken(s, 'sign02', 'ffffffffffffffff', { 'usage-bootstrap-signing': 'true' });
    await eventually('a new signature', async () => typeof (await s.admin.request('GET', clusterInfo)).json.data?.['jws-kubeconfig-sign02'] === 'string');
    assert.equal((await s.admin.request('DELETE', `${secrets}/bootstrap-token-sign02`)).status, 200);
    await eventually('the signature to go', async () => (await s.admin.request('GET', clusterInfo)).json.data?.['jws-kubeconfig-sign02'] === undefined);

    const cm = (await s.admin.request('GET', clusterInfo)).json;
    const changed = cm.data.kubeconfig.replace(s.url, 'https://lb.example:6443');
    const put = await s.admin.request('PUT', clusterInfo, { ...cm, data: { ...cm.data, kubeconfig: changed } });
    assert.equal(put.status, 200, put.text);
    await eventually('a signature of the new kubeconfig', async () => {
      const now = (await s.admin.request('GET', clusterInfo)).json;
      if (now.data.kubeconfig !== changed) return false;
      try {
        await verifyDetached(now.data['jws-kubeconfig-abcdef'], changed, 'abcdef.0123456789abcdef');
        return true;
      } catch {
        return false;
      }
    });
  });
});

describe('bootstrap tokens with the token cleaner disabled', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--enable-bootstrap-token-auth', '--controllers=*,-tokencleaner', '--authorization-mode=AlwaysAllow'] });
  });
  after(async () => {
    await s?.close();
  });

  it('refuses an expired token, and one with an unparseable expiration, that are still stored', async () => {
    await putToken(s, 'old001', 'gggggggggggggggg', {
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
      expiration: rfc3339(Date.now() - 1000),
    });
    await putToken(s, 'bad001', 'hhhhhhhhhhhhhhhh', { 'usage-bootstrap-authentication': 'true', expiration: 'tomorrow' });
    assert.equal((await withToken(s, 'old001.gggggggggggggggg')).status, 401);
    assert.equal((await withToken(s, 'bad001.hhhhhhhhhhhhhhhh')).status, 401);
    assert.equal((await s.admin.request('GET', `${secrets}/bootstrap-token-old001`)).status, 200);
    // The signer ignores expired tokens.
    await eventually('cluster-info', async () => (await s.admin.request('GET', clusterInfo)).status === 200);
    assert.equal((await s.admin.request('GET', clusterInfo)).json.data['jws-kubeconfig-old001'], undefined);
  });
});

describe('bootstrap tokens disabled', () => {
  it('does not accept them and runs neither bootstrap controller, unless --controllers names one', async () => {
    const s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
    try {
      await putToken(s, 'abcdef', '0123456789abcdef', { 'usage-bootstrap-authentication': 'true' });
      assert.equal((await withToken(s, 'abcdef.0123456789abcdef')).status, 401);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await s.admin.request('GET', clusterInfo)).status, 404);
    } finally {
      await s.close();
    }
    const t = await startTestServer({ flags: ['--controllers=*,bootstrapsigner'] });
    try {
      await eventually('cluster-info', async () => (await t.admin.request('GET', clusterInfo)).status === 200);
    } finally {
      await t.close();
    }
  });
});
