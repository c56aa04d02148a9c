// The forward-auth contracts by their headers, from a test client that plays
// the proxy (its client certificate named by --forward-auth-proxy-names) and
// from one that is not trusted: Traefik ForwardAuth (X-Forwarded-Method /
// -Uri), Envoy ext_authz (the original path after the endpoint), every
// route-table form (exact path, prefix, pattern with captures as resource
// attributes, regex; ignore and deny; identity headers off), a forwarded
// client certificate, and the bad input a proxy must never get through:
// repeated headers, absolute URIs, dot segments, encoded slashes, a body.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request, type Agent } from 'node:https';
import { connect } from 'node:http2';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { freePort, runGatehouse, startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { HttpsClient } from '../helpers/client.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A raw request: the path goes out byte for byte (no URL normalization of dot segments). */
function call(agent: Agent, port: number, method: string, path: string, headers: OutgoingHttpHeaders = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function clientCert(gh: Gatehouse, dir: string, user: string, groups: string[] = []): Promise<{ cert: string; key: string }> {
  const kc = join(dir, `${user}.kubeconfig`);
  const made = await runGatehouse([
    'certs',
    'client',
    '--dir',
    gh.dataDir,
    '--user',
    user,
    ...groups.flatMap((g) => ['--group', g]),
    '--out',
    kc,
    '--server',
    gh.url,
  ]);
  assert.equal(made.code, 0, made.stderr);
  const u = (parseYaml(readFileSync(kc, 'utf8')) as { users: { user: Record<string, string> }[] }).users[0]!.user;
  return { cert: Buffer.from(u['client-certificate-data']!, 'base64').toString(), key: Buffer.from(u['client-key-data']!, 'base64').toString() };
}

const ROUTES = `
routes:
- name: health
  path: /healthz
  action: ignore
- name: internal
  prefix: /internal
  action: deny
- name: pods
  pattern: /namespaces/{namespace}/{resource}/{name}
  resourceAttributes:
    apiVersion: v1
- name: metrics
  regex: /metrics(/.*)?
  identityHeaders: false
- name: app
  prefix: /app
`;

describe('forward auth: Traefik and Envoy contracts, trusted proxies, the route table', { timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let proxy: HttpsClient;
  let untrusted: HttpsClient;
  let carlPem: string;
  const alice = { authorization: 'Bearer alice-token' };
  const fa = '/gatehouse/forward-auth';
  const traefik = (method: string, uri: string, extra: OutgoingHttpHeaders = alice) =>
    call(proxy.agent, gh.port, 'GET', fa, {
      'x-forwarded-method': method,
      'x-forwarded-uri': uri,
      'x-forwarded-host': 'app.example',
      'x-forwarded-proto': 'https',
      ...extra,
    });

  before(async () => {
    const dir = tempDir('fa-contracts');
    writeFileSync(join(dir, 'tokens.csv'), 'alice-token,alice,u-alice,"readers,team-a"\n');
    writeFileSync(join(dir, 'routes.yaml'), ROUTES);
    gh = await startGatehouse({
      flags: [`--token-auth-file=${join(dir, 'tokens.csv')}`, '--forward-auth-proxy-names=edge-proxy', `--routes=${join(dir, 'routes.yaml')}`],
    });
    const ca = readFileSync(join(gh.dataDir, 'pki', 'ca.crt'), 'utf8');
    proxy = new HttpsClient(gh.url, { ca, ...(await clientCert(gh, dir, 'edge-proxy')) });
    // A valid client certificate, but not a proxy's name.
    untrusted = new HttpsClient(gh.url, { ca, ...(await clientCert(gh, dir, 'mallory')) });
    carlPem = (await clientCert(gh, dir, 'carl', ['readers'])).cert;
    const a = gh.admin;
    const post = async (path: string, body: unknown) => {
      const r = await a.request('POST', path, body);
      assert.equal(r.status, 201, r.text);
    };
    await post('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'fa-reader' },
      rules: [{ nonResourceURLs: ['/app', '/app/*', '/metrics', '/metrics/*'], verbs: ['get'] }],
    });
    await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'fa-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'fa-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'readers' }],
    });
    await post('/api/v1/namespaces', { metadata: { name: 'team-a' } });
    await post('/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles', {
      metadata: { name: 'pod-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    await post('/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings', {
      metadata: { name: 'pod-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
  });

  after(async () => {
    proxy?.agent.destroy();
    untrusted?.agent.destroy();
    await stopAll();
  });

  it('Traefik: an allowed request answers 200 with kube and oauth2-proxy identity headers', async () => {
    const r = await traefik('GET', '/app/dashboard?tab=1');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['x-remote-user'], 'alice');
    assert.equal(r.headers['x-remote-uid'], 'u-alice');
    assert.equal(r.headers['x-remote-group'], 'readers, team-a, system:authenticated');
    assert.equal(r.headers['x-auth-request-user'], 'alice');
    assert.equal(r.headers['x-auth-request-groups'], 'readers,team-a,system:authenticated');
  });

  it('Traefik: the verb is the forwarded method; a denied one is 403 with kube reason', async () => {
    const r = await traefik('DELETE', '/app/dashboard');
    assert.equal(r.status, 403);
    const s = JSON.parse(r.text);
    assert.equal(s.reason, 'Forbidden');
    assert.match(s.message, /User "alice" cannot delete path "\/app\/dashboard"/);
  });

  it('Envoy: the original method and the path after the endpoint', async () => {
    assert.equal((await call(proxy.agent, gh.port, 'GET', `${fa}/app/x?y=1`, alice)).status, 200);
    assert.equal((await call(proxy.agent, gh.port, 'POST', `${fa}/app/x`, alice)).status, 403);
  });

  it('unauthenticated is 401 with WWW-Authenticate: Bearer', async () => {
    for (const h of [{}, { authorization: 'Bearer wrong' }]) {
      const r = await traefik('GET', '/app/x', h);
      assert.equal(r.status, 401);
      assert.equal(r.headers['www-authenticate'], 'Bearer');
    }
  });

  it('a caller that is not a trusted proxy gets 400, whatever it claims (also with a valid certificate and token)', async () => {
    for (const agent of [untrusted.agent, gh.anonymous.agent]) {
      const r = await call(agent, gh.port, 'GET', fa, { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/app/x', ...alice });
      assert.equal(r.status, 400);
      assert.match(JSON.parse(r.text).message, /not a trusted proxy/);
    }
  });

  it('pattern captures become resource attributes: alice may get pods in team-a only', async () => {
    assert.equal((await traefik('GET', '/namespaces/team-a/pods/p1')).status, 200);
    const r = await traefik('GET', '/namespaces/team-b/pods/p1');
    assert.equal(r.status, 403);
    assert.match(JSON.parse(r.text).message, /pods "p1" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"/);
  });

  it('ignore answers 200 without authentication or identity; deny is 403 for everyone; no route is 404', async () => {
    const ignored = await traefik('GET', '/healthz', {});
    assert.equal(ignored.status, 200);
    assert.equal(ignored.headers['x-remote-user'], undefined);
    const denied = await traefik('GET', '/internal/x');
    assert.equal(denied.status, 403);
    assert.match(JSON.parse(denied.text).message, /route "internal" denies/);
    assert.equal((await traefik('GET', '/elsewhere')).status, 404);
  });

  it('a regex route with identity headers off: allowed, no user named', async () => {
    const r = await traefik('GET', '/metrics/cpu');
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-remote-user'], undefined);
  });

  it('a client certificate the proxy forwards authenticates its owner (nginx $ssl_client_escaped_cert, Envoy XFCC)', async () => {
    const escaped = encodeURIComponent(carlPem);
    for (const xfcc of [escaped, `By=spiffe://x;Hash=abc;Cert="${escaped}"`]) {
      const r = await traefik('GET', '/app/x', { 'x-forwarded-client-cert': xfcc });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers['x-remote-user'], 'carl');
    }
    // A client certificate of another PKI, which does not chain to --client-ca-file: 401.
    const other = tempDir('fa-other-pki');
    const made = await runGatehouse(['certs', 'init', '--dir', other]);
    assert.equal(made.code, 0, made.stderr);
    const bogus = encodeURIComponent(readFileSync(join(other, 'pki', 'admin.crt'), 'utf8'));
    assert.equal((await traefik('GET', '/app/x', { 'x-forwarded-client-cert': bogus })).status, 401);
  });

  it('bad input is a 400 naming what is wrong', async () => {
    const cases: Array<[string, Promise<Answer>, RegExp]> = [
      ['two URIs', traefik('GET', '/app/x', { ...alice, 'x-forwarded-uri': ['/app/x', '/internal'] }), /several x-forwarded-uri headers/i],
      ['absolute URI', traefik('GET', 'https://evil.example/app/x'), /absolute URIs are refused/],
      ['scheme-relative URI', traefik('GET', '//evil.example/app/x'), /absolute URIs are refused/],
      ['dot segments', traefik('GET', '/app/../internal/x'), /dot segments/],
      ['encoded dot segments', traefik('GET', '/app/%2e%2e/internal/x'), /dot segments/],
      ['encoded slash', traefik('GET', '/app%2Finternal'), /encoded "\/"/],
      ['Envoy dot segments', call(proxy.agent, gh.port, 'GET', `${fa}/app/../internal`, alice), /dot segments/],
      [
        'a body',
        call(proxy.agent, gh.port, 'POST', fa, { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/app/x', 'content-length': '2', ...alice }, '{}'),
        /must not have a body/,
      ],
      ['two contracts', traefik('GET', '/app/x', { ...alice, 'x-original-uri': '/internal', 'x-original-method': 'GET' }), /together/],
      ['no original request', call(proxy.agent, gh.port, 'GET', fa, alice), /no original request/],
      ['no method', call(proxy.agent, gh.port, 'GET', fa, { 'x-forwarded-uri': '/app/x', ...alice }), /X-Forwarded-Method is required/],
    ];
    for (const [what, p, message] of cases) {
      const r = await p;
      assert.equal(r.status, 400, `${what}: ${r.status} ${r.text}`);
      const s = JSON.parse(r.text);
      assert.equal(s.kind, 'Status', what);
      assert.match(s.message, message, what);
    }
  });

  it('answers a proxy that speaks HTTP/2 the same way', async () => {
    const ca = readFileSync(join(gh.dataDir, 'pki', 'ca.crt'), 'utf8');
    const opts = proxy.agent.options as { cert?: string; key?: string };
    const session = connect(gh.url, { ca, cert: opts.cert!, key: opts.key! });
    try {
      const answer = await new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
        const req = session.request({ ':path': fa, 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/app/x', ...alice });
        req.on('response', (h) => {
          req.resume();
          req.on('end', () => resolve({ status: Number(h[':status']), headers: h }));
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['x-remote-user'], 'alice');
      assert.equal(answer.headers['x-remote-group'], 'readers, team-a, system:authenticated');
      assert.equal(answer.headers['x-auth-request-groups'], 'readers,team-a,system:authenticated');
    } finally {
      session.close();
    }
  });

  it('the rest of the gateway is untouched: a path beside the endpoint goes to the chain', async () => {
    const r = await gh.admin.request('GET', `${fa}-not`);
    assert.equal(r.status, 404);
  });
});

describe('a route table that cannot work is refused at start, naming the route', { timeout: 60_000 }, () => {
  after(stopAll);
  const cases: Array<[string, string, RegExp]> = [
    ['a shadowed route', 'routes:\n- {name: all, prefix: /api}\n- {name: pods, pattern: "/api/v1/*"}\n', /routes\[1\] "pods": never matches: route "all"/],
    ['a bad regex', 'routes:\n- {name: r, regex: "/x(["}\n', /routes\[0\] "r": regex: .*not a regular expression/],
    [
      'an unknown capture',
      'routes:\n- {name: p, pattern: "/ns/{namespace}", resourceAttributes: {resource: "{kind}"}}\n',
      /routes\[0\] "p": resourceAttributes: resource: "\{kind\}" is not a capture/,
    ],
    ['an upstream outside sidecar mode', 'routes:\n- {name: u, prefix: /, upstream: "http://127.0.0.1:1"}\n', /routes\[0\] "u": upstream is for sidecar mode/],
    ['two matches in one route', 'routes:\n- {name: two, path: /a, prefix: /b}\n', /exactly one of path, prefix, pattern, regex/],
  ];
  for (const [what, yaml, message] of cases) {
    it(what, async () => {
      const dir = tempDir('fa-routes');
      writeFileSync(join(dir, 'routes.yaml'), yaml);
      const r = await runGatehouse(['serve', `--secure-port=${await freePort()}`, `--data-dir=${dir}`, `--routes=${join(dir, 'routes.yaml')}`], 60_000);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
      // Refused before anything is written: no development PKI, no store in the data directory.
      assert.deepEqual(readdirSync(dir), ['routes.yaml']);
    });
  }
  it('in sidecar mode too, before the development PKI is written', async () => {
    const dir = tempDir('fa-routes');
    writeFileSync(join(dir, 'routes.yaml'), 'routes:\n- {name: u, prefix: /, upstream: nowhere}\n');
    const r = await runGatehouse(
      ['serve', '--upstream=http://127.0.0.1:1', `--secure-port=${await freePort()}`, `--data-dir=${dir}`, `--routes=${join(dir, 'routes.yaml')}`],
      60_000,
    );
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /routes\[0\] "u": upstream/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.deepEqual(readdirSync(dir), ['routes.yaml']);
  });
});
