// `gatehouse kube-rbac-proxy` with kube-rbac-proxy's own argument lists, as
// kube-prometheus's manifests (node-exporter, kube-state-metrics) and
// kube-rbac-proxy's resource-attributes example write them, unchanged but
// for the addresses: a second Gatehouse plays the cluster (the sidecar finds
// it by the in-cluster configuration, as in a pod), its TokenReview and
// SubjectAccessReview decide, and a small HTTP service plays the exporter.
// Flags Gatehouse does not support are refused by name.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { request } from 'node:https';
import { connect } from 'node:tls';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GATEHOUSE_BIN, freePort, runGatehouse, spawnTracked, startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { closeServer } from '../helpers/closeserver.js';

const NS = 'monitoring';
// kube-prometheus's list (node-exporter, kube-state-metrics, blackbox-exporter, prometheus-operator).
const CIPHERS =
  '--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305';

function get(port: number, path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function plainGet(port: number, path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Whether a TLS 1.2 handshake offering only `cipher` succeeds. */
function handshake(port: number, cipher: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, maxVersion: 'TLSv1.2', ciphers: cipher }, () => {
      s.end();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

describe("gatehouse kube-rbac-proxy with kube-prometheus's and kube-rbac-proxy's argument lists", { timeout: 180_000 }, () => {
  let cluster: Gatehouse;
  let exporter: Server;
  let upstream: string;
  let env: NodeJS.ProcessEnv;
  const tokens: Record<string, string> = {};

  async function start(args: string[]): Promise<number> {
    const m = /:(\d+)$/.exec(args.find((a) => a.startsWith('--secure-listen-address='))!);
    const proc = spawnTracked(process.execPath, [GATEHOUSE_BIN, 'kube-rbac-proxy', ...args], { env: { ...process.env, ...env } });
    proc.child.stdin?.end();
    await proc.waitFor('the sidecar serving', (p) => p.stdout.includes('sidecar is serving on') || !p.running, 60_000);
    if (!proc.running) throw new Error(`kube-rbac-proxy exited\n${proc.stderr}`);
    return Number(m![1]);
  }

  before(async () => {
    cluster = await startGatehouse();
    const a = cluster.admin;
    const post = async (path: string, body: unknown) => {
      const r = await a.request('POST', path, body);
      assert.ok(r.status === 201, `${path}: ${r.status} ${r.text}`);
      return r;
    };
    await post('/api/v1/namespaces', { metadata: { name: NS } });
    for (const sa of ['kube-rbac-proxy', 'prometheus-k8s', 'stranger']) await post(`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: sa } });
    // kube-prometheus's node-exporter ClusterRole: the sidecar's identity may create the reviews.
    await post('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'node-exporter' },
      rules: [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ],
    });
    await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'node-exporter' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-exporter' },
      subjects: [{ kind: 'ServiceAccount', name: 'kube-rbac-proxy', namespace: NS }],
    });
    // kube-prometheus's prometheus-k8s ClusterRole: get /metrics.
    await post('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'prometheus-k8s' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'prometheus-k8s' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'prometheus-k8s' },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: NS }],
    });
    // kube-rbac-proxy's resource-attributes example: get services/proxy "kube-rbac-proxy".
    await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
      metadata: { name: 'proxy-reader' },
      rules: [{ apiGroups: [''], resources: ['services/proxy'], resourceNames: ['kube-rbac-proxy'], verbs: ['get'] }],
    });
    await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      metadata: { name: 'proxy-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'proxy-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: NS }],
    });
    for (const sa of ['kube-rbac-proxy', 'prometheus-k8s', 'stranger']) {
      const r = await post(`/api/v1/namespaces/${NS}/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
      tokens[sa] = r.json.status.token as string;
    }
    const saDir = join(tempDir('krp-sa'), 'serviceaccount');
    mkdirSync(saDir);
    writeFileSync(join(saDir, 'token'), tokens['kube-rbac-proxy']!);
    writeFileSync(join(saDir, 'ca.crt'), readFileSync(join(cluster.dataDir, 'pki', 'ca.crt')));
    env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(cluster.port), GATEHOUSE_SERVICEACCOUNT_DIR: saDir };

    exporter = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`# exporter ${req.url}\nnode_up 1\n`));
    await new Promise<void>((r) => exporter.listen(0, '127.0.0.1', r));
    upstream = `http://127.0.0.1:${(exporter.address() as AddressInfo).port}/`;
  });

  after(async () => {
    if (exporter) await closeServer(exporter);
    await stopAll();
  });

  it("node-exporter's list: prometheus-k8s scrapes /metrics, others are 403 or 401, and only the listed cipher suites are served", async () => {
    const port = await start([`--secure-listen-address=[127.0.0.1]:${await freePort()}`, CIPHERS, `--upstream=${upstream}`]);
    const ok = await get(port, '/metrics', tokens['prometheus-k8s']);
    assert.equal(ok.status, 200, ok.body);
    assert.match(ok.body, /node_up 1/);
    const denied = await get(port, '/metrics', tokens['stranger']);
    assert.equal(denied.status, 403);
    assert.match(denied.body, /Forbidden \(user=system:serviceaccount:monitoring:stranger, verb=get, path=\/metrics\)/);
    assert.equal((await get(port, '/metrics')).status, 401);
    assert.equal(await handshake(port, 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256'), true);
    // Not in the list: RSA key exchange, CBC (which a server with Node's defaults, the cluster here, does serve).
    assert.equal(await handshake(cluster.port, 'ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA'), true);
    assert.equal(await handshake(port, 'AES128-GCM-SHA256'), false);
    assert.equal(await handshake(port, 'ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA'), false);
  });

  it("kube-state-metrics's list (an all-interfaces address), with klog's flags and the proxy's own /healthz port", async () => {
    const healthPort = await freePort();
    const port = await start([
      `--secure-listen-address=:${await freePort()}`,
      CIPHERS,
      `--upstream=${upstream}`,
      '--logtostderr=true',
      '--v=10',
      `--proxy-endpoints-port=${healthPort}`,
    ]);
    assert.equal((await get(port, '/metrics', tokens['prometheus-k8s'])).status, 200);
    // /healthz on its own port, anonymous; on the main port it is the upstream's, behind authentication.
    const health = await get(healthPort, '/healthz');
    assert.equal(health.status, 200);
    assert.equal(health.body, 'ok');
    assert.equal((await get(port, '/healthz')).status, 401);
  });

  it("kube-rbac-proxy's resource-attributes example: --config-file decides by services/proxy, also on a loopback plain-HTTP listener", async () => {
    const file = join(tempDir('krp-config'), 'config-file.yaml');
    writeFileSync(
      file,
      `authorization:\n  resourceAttributes:\n    namespace: ${NS}\n    apiVersion: v1\n    resource: services\n    subresource: proxy\n    name: kube-rbac-proxy\n`,
    );
    const plain = await freePort();
    const port = await start([
      `--secure-listen-address=127.0.0.1:${await freePort()}`,
      `--insecure-listen-address=127.0.0.1:${plain}`,
      `--upstream=${upstream}`,
      `--config-file=${file}`,
      '--logtostderr=true',
      '--v=10',
    ]);
    assert.equal((await get(port, '/anything', tokens['prometheus-k8s'])).status, 200);
    // The loopback plain-HTTP listener takes the same chain.
    assert.equal(await plainGet(plain, '/anything', tokens['prometheus-k8s']!), 200);
    assert.equal(await plainGet(plain, '/anything', tokens['stranger']!), 403);
    const denied = await get(port, '/anything', tokens['stranger']);
    assert.equal(denied.status, 403);
    assert.match(denied.body, /resource=services, subresource=proxy, namespace=monitoring, name=kube-rbac-proxy/);
  });

  it('refuses the flags it does not support, by name, in one line', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--tls-reload-interval=1m'], /--tls-reload-interval is deprecated and not supported/],
      [
        ['--insecure-listen-address=0.0.0.0:8080'],
        /invalid value "0\.0\.0\.0:8080" for --insecure-listen-address: plain HTTP is served only on a loopback address/,
      ],
      [['--disable-http2-serving'], /--disable-http2-serving is not supported by Gatehouse yet/],
      [['--upstream-force-h2c', '--upstream=http://10.1.2.3:8080/'], /--upstream-force-h2c needs a loopback http:\/\/ --upstream/],
      [['--log-dir=/tmp'], /unknown kube-rbac-proxy flag: --log-dir/],
      [['--tls-cipher-suites=TLS_RSA_WITH_3DES_EDE_CBC_SHA'], /TLS_RSA_WITH_3DES_EDE_CBC_SHA.*insecure/],
      [['--auth-header-fields-enabled', '--upstream=http://10.1.2.3:8080/'], /identity headers only to a loopback --upstream or over mTLS/],
    ];
    for (const [extra, message] of cases) {
      const r = await runGatehouse(['kube-rbac-proxy', '--secure-listen-address=127.0.0.1:1', `--upstream=${upstream}`, ...extra]);
      assert.equal(r.code, 1, `${extra.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });
});
