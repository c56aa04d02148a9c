// Hostile paths: dot segments, encoded slashes, empty segments,
// path parameters, NUL and backslashes on local routes, on the health
// allow-list and through the aggregation proxy. Authorization reads the
// decoded path and a backend the raw one, so either both name the same
// resource or the request is refused before authorization.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { register, servingPki, startEcho, type EchoBackend } from '../aggregation/fixture.js';

const GROUP = 'echo.gatehouse.dev';
const ALICE = 'alice-token-for-paths';

interface Raw {
  status: number;
  json: { kind?: string; code?: number; message?: string } | undefined;
  text: string;
}

/** Sends the path byte for byte (new URL() would resolve its dot segments first). */
function raw(gh: Gatehouse, path: string, token?: string): Promise<Raw> {
  const ca = readFileSync(join(gh.dataDir, 'pki', 'ca.crt'), 'utf8');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: gh.port,
        path,
        method: 'GET',
        ca,
        servername: 'localhost',
        agent: false,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          let json: Raw['json'];
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('hostile request paths', { timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let echo: EchoBackend;

  before(async () => {
    const dir = tempDir('paths');
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${ALICE},alice,alice-uid\n`);
    gh = await startGatehouse({ flags: [`--token-auth-file=${tokens}`] });
    const frontProxyCa = readFileSync(join(gh.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8');
    const pem = servingPki(dir, 'echo');
    echo = await startEcho(pem, frontProxyCa);
    await register(gh.admin, { service: 'echo', port: echo.port, group: GROUP, caPem: pem.ca, gpm: 20000 });
    // Alice may read the echo group and nothing else.
    const role = await gh.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'echo-reader' },
      rules: [{ apiGroups: [GROUP], resources: ['*'], verbs: ['get', 'list'] }],
    });
    assert.equal(role.status, 201, role.text);
    const binding = await gh.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'alice-echo-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'echo-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
    assert.equal(binding.status, 201, binding.text);
    // The APIService is routed once the gateway's informer has it.
    const deadline = Date.now() + 30_000;
    while ((await raw(gh, `/apis/${GROUP}/v1/namespaces/x/echoes/warm`, ALICE)).status !== 200) {
      if (Date.now() > deadline) throw new Error('the echo APIService never served');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  after(async () => {
    await echo?.close();
    await stopAll();
  });

  const attacks = [
    `/apis/${GROUP}/v1/things/../../../../api/v1/namespaces/kube-system/secrets/x`,
    `/apis/${GROUP}/v1/things/%2e%2e/%2E%2E/%2e%2E/%2e%2e/api/v1/namespaces/kube-system/secrets/x`,
    `/apis/${GROUP}/v1/things/.%2e/.%2e/.%2e/.%2e/api/v1/namespaces/kube-system/secrets/x`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/./a`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/a%2F..%2F..%2Fsecrets`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/a%2f`,
    `/apis/${GROUP}/v1//namespaces/x/echoes/a`,
    `//apis/${GROUP}/v1/namespaces/x/echoes/a`,
    `/apis/${GROUP}/v1/namespaces/x/echoes;x=y/a`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/a;jsessionid=1`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/a%3Bx=y`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/a%00.json`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/a\\..\\..\\secrets`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/a%5C..%5Csecrets`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/%252e%252e`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/a%zz`,
    `/apis/${GROUP}/v1/namespaces/x/echoes/%C0%AE%C0%AE`,
  ];

  it('through the proxy, every path a backend could read differently is refused with a 400 Status and never forwarded', async () => {
    const before = new Set(echo.seen.keys());
    for (const path of attacks) {
      const r = await raw(gh, path, ALICE);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.equal(r.json?.kind, 'Status', path);
      assert.match(r.json?.message ?? '', /^invalid request path "/, path);
    }
    assert.deepEqual(
      [...echo.seen.keys()].filter((k) => !before.has(k)),
      [],
    );
    // A legitimate request right after still works, and the backend receives exactly the authorized path.
    const ok = await raw(gh, `/apis/${GROUP}/v1/namespaces/x/echoes/a%3Ab`, ALICE);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(echo.seen.get(`/apis/${GROUP}/v1/namespaces/x/echoes/a%3Ab`)?.headers['x-remote-user'], 'alice');
  });

  it('a reported traversal never reaches the secret, even for a user allowed everywhere', async () => {
    await gh.admin.request('POST', '/api/v1/namespaces/kube-system/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'x' },
      stringData: { k: 'v' },
    });
    const r = await raw(gh, `/apis/${GROUP}/v1/things/../../../../api/v1/namespaces/kube-system/secrets/x`, ALICE);
    assert.equal(r.status, 400);
    assert.doesNotMatch(r.text, /"k"/);
    const direct = await raw(gh, '/api/v1/namespaces/kube-system/secrets/x', ALICE);
    assert.equal(direct.status, 403);
  });

  it('local routes refuse dot segments, encoded slashes and empty segments in namespaces and names', async () => {
    for (const path of [
      '/api/v1/namespaces/default/../kube-system/secrets',
      '/api/v1/namespaces/%2e%2e/configmaps',
      '/api/v1/namespaces/kube-system/configmaps/a%2Fb',
      '/api/v1/namespaces//configmaps',
      '/api/v1/namespaces/default/configmaps/a;b',
      '/api/v1/namespaces/default/configmaps/a%00',
      '/api/v1/namespaces/default\\configmaps',
    ]) {
      const r = await raw(gh, path, ALICE);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
    }
    // A trailing slash is a path kube-apiserver accepts.
    assert.equal((await gh.admin.request('GET', '/api/v1/namespaces/default/configmaps/')).status, 200);
  });

  it('the anonymous health allow-list cannot be walked out of', async () => {
    for (const path of ['/healthz/../api/v1/namespaces/kube-system/secrets', '/livez/%2e%2e/metrics', '/readyz/./', '/version/..', '/healthz%2F..%2Fmetrics']) {
      const r = await raw(gh, path);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
    }
    const live = await raw(gh, '/livez');
    assert.equal(live.status, 200, live.text);
    assert.equal((await raw(gh, '/healthz')).status, 200);
  });
});
