// kube-rbac-proxy's configuration file in the sidecar, as its rewrite and
// static-authorization examples use it: `{{ .Value }}` filled from a query
// parameter and a header, one SubjectAccessReview per value (all must
// allow; none given is a 400 naming where the value comes from), static
// rules that allow without asking the cluster, and the file followed on
// change. A real SubjectAccessReview webhook decides by the user name and
// records what it was asked.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { generateCa, generateClientCert } from '../../certs/pki.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { startSidecar, type RunningSidecar } from '../../gateway/sidecar/index.js';
import { parseProxyConfig } from '../../gateway/sidecar/proxyconfig.js';
import { HttpsClient } from '../helpers/client.js';
import { closeServer } from '../helpers/closeserver.js';
import { freePort } from '../helpers/ports.js';
import { eventually } from '../helpers/eventually.js';
import { startWebhookPeer, type WebhookPeer } from '../authz/webhookpeer.js';

// kube-rbac-proxy's examples/rewrites config, with a header as well, and a static rule.
const CONFIG = (staticUser: string) => `
authorization:
  rewrites:
    byQueryParameter:
      name: "namespace"
    byHttpHeader:
      name: "x-namespace"
  resourceAttributes:
    resource: namespaces
    subresource: metrics
    namespace: "{{ .Value }}"
  static:
  - user:
      name: ${staticUser}
    resourceRequest: true
    resource: namespaces
    subresource: metrics
    namespace: open
    verb: get
`;

describe("sidecar with kube-rbac-proxy's config file: rewrites, static, reload", { timeout: 60_000 }, () => {
  let dir: string;
  let peer: WebhookPeer;
  let upstream: Server;
  let sidecar: RunningSidecar;
  let client: (user: string) => HttpsClient;
  const logs: string[] = [];
  let asked: () => Array<Record<string, unknown>>;

  const get = async (user: string, path: string, headers: Record<string, string> = {}) => {
    const c = client(user);
    try {
      return await c.request('GET', path, undefined, headers);
    } finally {
      c.close();
    }
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-config-'));
    peer = await startWebhookPeer();
    upstream = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`upstream ${req.url}`));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    await writeFile(join(dir, 'config.yaml'), CONFIG('static-sam'));
    const clientCa = generateCa('sidecar-clients');
    await writeFile(join(dir, 'clients.crt'), clientCa.certPem);
    const parsed = parseServeFlags([
      `--secure-port=${await freePort()}`,
      `--data-dir=${dir}`,
      `--upstream=http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      `--resource-attributes=${join(dir, 'config.yaml')}`,
      `--client-ca-file=${join(dir, 'clients.crt')}`,
      `--authentication-token-webhook-config-file=${await peer.kubeconfig(dir, 'authn')}`,
      '--authentication-token-webhook-version=v1',
      `--authorization-webhook-config-file=${await peer.kubeconfig(dir, 'authz')}`,
      '--authorization-webhook-version=v1',
      '--authorization-webhook-cache-authorized-ttl=0s',
      '--authorization-webhook-cache-unauthorized-ttl=0s',
    ]);
    if ('error' in parsed) throw new Error(parsed.error);
    sidecar = await startSidecar(parsed.options, { log: (m) => logs.push(m), env: {} });
    const ca = await readFile(devPkiPaths(dir).caCert, 'utf8');
    client = (user) => {
      const c = generateClientCert(clientCa, { user });
      return new HttpsClient(sidecar.url, { ca, cert: c.certPem, key: c.keyPem });
    };
    let mark = 0;
    asked = () => {
      const out = peer.received.slice(mark).map((r) => r.spec['resourceAttributes'] as Record<string, unknown>);
      mark = peer.received.length;
      return out;
    };
  });

  after(async () => {
    await sidecar?.shutdown('test');
    await closeServer(upstream);
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('asks one review per query value and header value, each with the value in its attributes', async () => {
    asked();
    const r = await get('allow-alice', '/metrics?namespace=a&namespace=b', { 'x-namespace': 'c' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      asked().map((x) => x['namespace']),
      ['a', 'b', 'c'],
    );
  });

  it('all must allow: one denied value denies the request', async () => {
    const r = await get('deny-bob', '/metrics?namespace=a');
    assert.equal(r.status, 403);
    assert.equal(r.json.message, 'Forbidden (user=deny-bob, verb=get, resource=namespaces, subresource=metrics, namespace=a, name=)');
  });

  it('no value to rewrite with is a 400 naming where one is read', async () => {
    const r = await get('allow-alice', '/metrics');
    assert.equal(r.status, 400);
    assert.match(r.json.message, /the query parameter "namespace" or the header "x-namespace" is required/);
  });

  it('a static rule allows without asking the cluster (which would have said no)', async () => {
    asked();
    assert.equal((await get('static-sam', '/metrics?namespace=open')).status, 200);
    assert.deepEqual(asked(), []);
    // Outside the rule the cluster is asked, and says no to this user.
    assert.equal((await get('static-sam', '/metrics?namespace=closed')).status, 403);
    assert.equal(asked().length, 1);
  });

  it('follows the file: a changed static rule applies, and a broken file keeps the last good one', async () => {
    await writeFile(join(dir, 'config.yaml'), CONFIG('static-tom'));
    await eventually('the new static rule', async () => (await get('static-tom', '/metrics?namespace=open')).status === 200);
    assert.equal((await get('static-sam', '/metrics?namespace=open')).status, 403);
    await writeFile(join(dir, 'config.yaml'), 'authorization:\n  rewrites: {byQueryParameter: {name: ns}}\n  bogus: 1\n');
    await eventually('the refusal logged', () =>
      logs.some((l) => l.includes('keeping the previous configuration') && l.includes('unknown field authorization.bogus')),
    );
    assert.equal((await get('static-tom', '/metrics?namespace=open')).status, 200);
  });
});

describe("kube-rbac-proxy's config file refused with the field named", () => {
  const cases: Array<[string, string, RegExp]> = [
    ['an unknown field', 'authorization:\n  resourceAttributes: {resource: pods, verbs: get}\n', /unknown field resourceAttributes\.verbs/],
    [
      'a template without rewrites',
      'authorization:\n  resourceAttributes: {resource: pods, namespace: "{{ .Value }}"}\n',
      /resourceAttributes\.namespace: "\{\{ \.Value \}\}" needs authorization\.rewrites/,
    ],
    [
      'another template',
      'authorization:\n  rewrites: {byHttpHeader: {name: x}}\n  resourceAttributes: {resource: pods, namespace: "{{ .Other }}"}\n',
      /only "\{\{ \.Value \}\}" may be templated/,
    ],
    ['rewrites with nothing to fill', 'authorization:\n  rewrites: {byHttpHeader: {name: x}}\n', /rewrites needs authorization\.resourceAttributes/],
    [
      'a static resource rule with a path',
      'authorization:\n  static:\n  - {resourceRequest: true, path: /x}\n',
      /static\[0\]: a resource request must not have a path/,
    ],
    ['a static rule with neither', 'authorization:\n  static:\n  - {verb: get}\n', /static\[0\]: a non-resource rule needs a path/],
  ];
  for (const [what, text, message] of cases) {
    it(what, () => assert.throws(() => parseProxyConfig(text), message));
  }
});
