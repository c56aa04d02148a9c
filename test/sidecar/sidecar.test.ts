// Sidecar mode end to end: a second Gatehouse plays the cluster (its
// TokenReview and SubjectAccessReview decide), `gatehouse serve --upstream`
// runs as a real process in front of a small HTTP echo service, once with
// webhook kubeconfig files and non-resource attributes, once with the
// in-cluster configuration (token + CA in an overridden directory) and
// --resource-attributes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { writeFileSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GATEHOUSE_BIN, freePort, runGatehouse, spawnTracked, startGatehouse, stopAll, tempDir, sleep, type Gatehouse, type Proc } from '../e2e/helpers.js';
import { HttpsClient } from '../helpers/client.js';
import { closeServer } from '../helpers/closeserver.js';
import { readFileSync } from 'node:fs';

const NSA = 'apps';

interface Seen {
  path: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
}

async function startEchoService(): Promise<{ server: Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', method: req.method ?? '', headers: { ...req.headers } });
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: req.url, headers: req.headers })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

async function ok(c: HttpsClient, method: string, path: string, body?: unknown): Promise<void> {
  const r = await c.request(method, path, body);
  assert.ok(r.status === 201 || r.status === 200 || r.status === 409, `${method} ${path}: ${r.status} ${r.text}`);
}

async function tokenFor(cluster: Gatehouse, sa: string): Promise<string> {
  const r = await cluster.admin.request('POST', `/api/v1/namespaces/${NSA}/serviceaccounts/${sa}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  assert.equal(r.status, 201, r.text);
  return r.json.status.token as string;
}

function webhookKubeconfig(file: string, server: string, caFile: string, token: string): string {
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: cluster',
      '  cluster:',
      `    server: ${server}`,
      `    certificate-authority: ${caFile}`,
      'users:',
      '- name: sidecar',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: c',
      '  context: {cluster: cluster, user: sidecar}',
      'current-context: c',
      '',
    ].join('\n'),
  );
  return file;
}

async function startSidecarProc(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ proc: Proc; client: (token?: string) => HttpsClient; port: number; dataDir: string }> {
  const port = await freePort();
  const dataDir = tempDir('sidecar');
  const proc = spawnTracked(process.execPath, [GATEHOUSE_BIN, 'serve', `--secure-port=${port}`, `--data-dir=${dataDir}`, ...args], {
    env: { ...process.env, ...env },
  });
  proc.child.stdin?.end();
  await proc.waitFor('the sidecar serving', (p) => p.stdout.includes('sidecar is serving on') || !p.running, 60_000);
  if (!proc.running) throw new Error(`sidecar exited\n${proc.stderr}`);
  const ca = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
  return { proc, port, dataDir, client: () => new HttpsClient(`https://127.0.0.1:${port}`, { ca }) };
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('sidecar mode (--upstream) in front of an HTTP service, the cluster deciding', { timeout: 180_000 }, () => {
  let cluster: Gatehouse;
  let echo: Awaited<ReturnType<typeof startEchoService>>;
  let hooked: Awaited<ReturnType<typeof startSidecarProc>>;
  let inCluster: Awaited<ReturnType<typeof startSidecarProc>>;
  let fields: Awaited<ReturnType<typeof startSidecarProc>>;
  let deadAuthz: Awaited<ReturnType<typeof startSidecarProc>>;
  const tokens: Record<string, string> = {};

  before(async () => {
    cluster = await startGatehouse();
    echo = await startEchoService();
    const a = cluster.admin;
    await ok(a, 'POST', '/api/v1/namespaces', { metadata: { name: NSA } });
    for (const sa of ['sidecar', 'reader', 'stranger']) await ok(a, 'POST', `/api/v1/namespaces/${NSA}/serviceaccounts`, { metadata: { name: sa } });
    // The sidecar's own identity: system:auth-delegator (create tokenreviews and subjectaccessreviews), nothing more.
    await ok(a, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'sidecar-auth-delegator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name: 'sidecar', namespace: NSA }],
    });
    await ok(a, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'echo-reader' },
      rules: [{ nonResourceURLs: ['/allowed', '/allowed/*'], verbs: ['get'] }],
    });
    await ok(a, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'echo-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'echo-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: NSA }],
    });
    await ok(a, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NSA}/roles`, {
      metadata: { name: 'echo-proxy' },
      rules: [{ apiGroups: [''], resources: ['services/proxy'], resourceNames: ['echo'], verbs: ['get', 'create'] }],
    });
    await ok(a, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NSA}/rolebindings`, {
      metadata: { name: 'echo-proxy' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'echo-proxy' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: NSA }],
    });
    for (const sa of ['sidecar', 'reader', 'stranger']) tokens[sa] = await tokenFor(cluster, sa);

    const dir = tempDir('sidecar-cfg');
    const caFile = join(cluster.dataDir, 'pki', 'ca.crt');
    const authn = webhookKubeconfig(join(dir, 'authn.kubeconfig'), `${cluster.url}/apis/authentication.k8s.io/v1/tokenreviews`, caFile, tokens['sidecar']!);
    const authz = webhookKubeconfig(
      join(dir, 'authz.kubeconfig'),
      `${cluster.url}/apis/authorization.k8s.io/v1/subjectaccessreviews`,
      caFile,
      tokens['sidecar']!,
    );
    hooked = await startSidecarProc([
      `--upstream=http://127.0.0.1:${echo.port}`,
      `--authentication-token-webhook-config-file=${authn}`,
      '--authentication-token-webhook-version=v1',
      `--authorization-webhook-config-file=${authz}`,
      '--authorization-webhook-version=v1',
      '--authorization-webhook-cache-unauthorized-ttl=0s',
      '--ignore-paths=/healthz,/metrics/*',
      '--auth-header-fields-enabled',
    ]);
    // kube-rbac-proxy's identity fields under other names.
    fields = await startSidecarProc([
      `--upstream=http://127.0.0.1:${echo.port}`,
      `--authentication-token-webhook-config-file=${authn}`,
      '--authentication-token-webhook-version=v1',
      `--authorization-webhook-config-file=${authz}`,
      '--authorization-webhook-version=v1',
      '--ignore-paths=/healthz',
      '--auth-header-fields-enabled=true',
      '--auth-header-user-field-name=X-Auth-User',
      '--auth-header-groups-field-name=x-auth-groups',
      '--auth-header-groups-field-separator=, ',
    ]);
    // The cluster's SubjectAccessReview unreachable (nothing listens on that port).
    const dead = webhookKubeconfig(
      join(dir, 'dead.kubeconfig'),
      `https://127.0.0.1:${await freePort()}/apis/authorization.k8s.io/v1/subjectaccessreviews`,
      caFile,
      tokens['sidecar']!,
    );
    deadAuthz = await startSidecarProc([
      `--upstream=http://127.0.0.1:${echo.port}`,
      `--authentication-token-webhook-config-file=${authn}`,
      '--authentication-token-webhook-version=v1',
      `--authorization-webhook-config-file=${dead}`,
      '--authorization-webhook-version=v1',
    ]);

    // InClusterConfig: the pod's token and CA, from an overridden directory.
    const saDir = join(dir, 'serviceaccount');
    mkdirSync(saDir);
    writeFileSync(join(saDir, 'token'), tokens['sidecar']!);
    writeFileSync(join(saDir, 'ca.crt'), readFileSync(caFile));
    const attrs = join(dir, 'attrs.yaml');
    writeFileSync(
      attrs,
      `authorization:\n  resourceAttributes:\n    namespace: ${NSA}\n    apiVersion: v1\n    resource: services\n    subresource: proxy\n    name: echo\n`,
    );
    inCluster = await startSidecarProc([`--upstream=http://127.0.0.1:${echo.port}/`, `--resource-attributes=${attrs}`, '--allow-paths=/api/*,/api/*/*'], {
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: String(cluster.port),
      GATEHOUSE_SERVICEACCOUNT_DIR: saDir,
    });
  });

  after(async () => {
    if (process.env.SIDECAR_DEBUG) process.stderr.write(`sidecar stderr:\n${hooked?.proc.stderr}\n${inCluster?.proc.stderr}\n`);
    await closeServer(echo?.server);
    await stopAll();
  });

  it('answers 401 without a credential or with a token the cluster does not know, and the service sees nothing', async () => {
    const before = echo.seen.length;
    const c = hooked.client();
    assert.equal((await c.request('GET', '/allowed/a')).status, 401);
    const bad = await c.request('GET', '/allowed/a', undefined, bearer('not-a-token'));
    assert.equal(bad.status, 401);
    assert.equal(bad.json.kind, 'Status');
    assert.equal(echo.seen.length, before);
    c.close();
  });

  it('passes a token from the cluster with the rights, with the identity headers and without the credential', async () => {
    const c = hooked.client();
    const r = await c.request('GET', '/allowed/a?x=1', undefined, bearer(tokens['reader']!));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.echo, '/allowed/a?x=1');
    const h = r.json.headers;
    assert.equal(h['x-remote-user'], `system:serviceaccount:${NSA}:reader`);
    assert.match(h['x-remote-group'], /system:serviceaccounts:apps/);
    assert.equal(h.authorization, undefined);
    c.close();
  });

  it('strips spoofed identity and impersonation headers', async () => {
    const c = hooked.client();
    const r = await c.request('GET', '/allowed/b', undefined, {
      ...bearer(tokens['reader']!),
      'X-Remote-User': 'admin',
      'X-Remote-Group': 'system:masters',
      'X-Remote-Extra-Scopes': 'all',
      'Impersonate-User': 'admin',
      'X-Remote-Uid': 'zero',
    });
    assert.equal(r.status, 200, r.text);
    const h = r.json.headers;
    assert.equal(h['x-remote-user'], `system:serviceaccount:${NSA}:reader`);
    assert.ok(!String(h['x-remote-group']).includes('system:masters'));
    assert.equal(h['x-remote-extra-scopes'], undefined);
    assert.equal(h['impersonate-user'], undefined);
    assert.notEqual(h['x-remote-uid'], 'zero');
    // An ignored path skips authorization but is stripped all the same.
    const ign = await c.request('GET', '/healthz', undefined, { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' });
    assert.equal(ign.status, 200, ign.text);
    assert.equal(ign.json.headers['x-remote-user'], undefined);
    assert.equal(ign.json.headers['x-remote-group'], undefined);
    c.close();
  });

  it('--auth-header-fields-enabled sends the user and the groups joined by "|" in x-remote-user and x-remote-groups, never the client\'s', async () => {
    const c = hooked.client();
    const r = await c.request('GET', '/allowed/fields', undefined, {
      ...bearer(tokens['reader']!),
      'X-Remote-User': 'admin',
      'X-REMOTE-GROUPS': 'system:masters',
      'x-remote-groups': 'system:masters|x',
    });
    assert.equal(r.status, 200, r.text);
    const h = r.json.headers;
    assert.equal(h['x-remote-user'], `system:serviceaccount:${NSA}:reader`);
    assert.equal(typeof h['x-remote-groups'], 'string');
    assert.deepEqual(h['x-remote-groups'].split('|').sort(), ['system:authenticated', 'system:serviceaccounts', `system:serviceaccounts:${NSA}`]);
    // An ignored path carries no identity, and not the client's either.
    const ign = await c.request('GET', '/healthz', undefined, { 'x-remote-groups': 'system:masters' });
    assert.equal(ign.status, 200, ign.text);
    assert.equal(ign.json.headers['x-remote-groups'], undefined);
    c.close();
  });

  it("custom --auth-header-* names and separator are used, and a client's copies of them are removed", async () => {
    const c = fields.client();
    const r = await c.request('GET', '/allowed/custom', undefined, {
      ...bearer(tokens['reader']!),
      'x-auth-user': 'admin',
      'X-Auth-Groups': 'system:masters',
      // Underscore spellings, which CGI-style upstreams read as the same header.
      X_Auth_User: 'admin',
      'x_auth-groups': 'system:masters',
      X_Remote_User: 'admin',
      x_remote_extra_scopes: 'all',
    });
    assert.equal(r.status, 200, r.text);
    const h = r.json.headers;
    for (const k of ['x_auth_user', 'x_auth-groups', 'x_remote_user', 'x_remote_extra_scopes']) assert.equal(h[k], undefined, k);
    assert.equal(h['x-auth-user'], `system:serviceaccount:${NSA}:reader`);
    assert.deepEqual(h['x-auth-groups'].split(', ').sort(), ['system:authenticated', 'system:serviceaccounts', `system:serviceaccounts:${NSA}`]);
    assert.equal(h['x-remote-groups'], undefined);
    const ign = await c.request('GET', '/healthz', undefined, { 'X-Auth-User': 'admin', 'x-auth-groups': 'system:masters' });
    assert.equal(ign.status, 200, ign.text);
    assert.equal(ign.json.headers['x-auth-user'], undefined);
    assert.equal(ign.json.headers['x-auth-groups'], undefined);
    // Without --auth-header-fields-enabled nothing is sent under the default names, and a client's copies are still removed.
    const off = inCluster.client();
    const o = await off.request('GET', '/api/v1/fields', undefined, { ...bearer(tokens['reader']!), 'x-remote-groups': 'system:masters' });
    assert.equal(o.status, 200, o.text);
    assert.equal(o.json.headers['x-remote-groups'], undefined);
    off.close();
    c.close();
  });

  it('a SubjectAccessReview that cannot be made answers 500 and never reaches the service', async () => {
    const before = echo.seen.length;
    const c = deadAuthz.client();
    const r = await c.request('GET', '/allowed/a', undefined, bearer(tokens['reader']!));
    assert.equal(r.status, 500, r.text);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'InternalError');
    assert.equal(echo.seen.length, before);
    c.close();
  });

  it('an ignored path cannot be walked out of: dot segments and encoded slashes are refused before the allow-list is read', async () => {
    const before = echo.seen.length;
    const ca = readFileSync(join(hooked.dataDir, 'pki', 'ca.crt'), 'utf8');
    for (const path of ['/healthz/../secret', '/healthz/%2e%2e/secret', '/metrics/x%2F..%2F..%2Fsecret', '/healthz;/../secret', '/metrics/a\\..\\..\\secret']) {
      const status = await new Promise<number>((resolve, reject) => {
        // Sent byte for byte: new URL() would resolve the dot segments first.
        httpsRequest({ host: '127.0.0.1', port: hooked.port, path, ca, servername: 'localhost', agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      assert.equal(status, 400, path);
    }
    assert.equal(echo.seen.length, before);
  });

  it('denies what the cluster denies: another path, another verb, another user', async () => {
    const c = hooked.client();
    const before = echo.seen.length;
    const other = await c.request('GET', '/secret', undefined, bearer(tokens['reader']!));
    assert.equal(other.status, 403, other.text);
    assert.match(other.json.message, /user=system:serviceaccount:apps:reader, verb=get, path=\/secret/);
    assert.equal((await c.request('POST', '/allowed/a', { a: 1 }, bearer(tokens['reader']!))).status, 403);
    assert.equal((await c.request('GET', '/allowed/a', undefined, bearer(tokens['stranger']!))).status, 403);
    assert.equal(echo.seen.length, before);
    c.close();
  });

  it('follows RBAC changes in the cluster', async () => {
    await ok(cluster.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'echo-stranger' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'echo-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'stranger', namespace: NSA }],
    });
    const c = hooked.client();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await c.request('GET', '/allowed/c', undefined, bearer(tokens['stranger']!))).status;
      if (status !== 200) await sleep(100);
    }
    assert.equal(status, 200);
    c.close();
  });

  it('in-cluster configuration with --resource-attributes: services/proxy "echo" in apps decides', async () => {
    const c = inCluster.client();
    const r = await c.request('GET', '/api/v1/anything', undefined, bearer(tokens['reader']!));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.headers['x-remote-user'], `system:serviceaccount:${NSA}:reader`);
    assert.equal((await c.request('POST', '/api/v1', {}, bearer(tokens['reader']!))).status, 200);
    const denied = await c.request('GET', '/api/v1', undefined, bearer(tokens['sidecar']!));
    assert.equal(denied.status, 403);
    assert.match(denied.json.message, /verb=get, resource=services, subresource=proxy, namespace=apps, name=echo/);
    // --allow-paths: anything else is 404 before authentication.
    assert.equal((await c.request('GET', '/other', undefined, bearer(tokens['reader']!))).status, 404);
    assert.equal((await c.request('GET', '/other')).status, 404);
    c.close();
  });

  it('rejects bad sidecar command lines in one line', async () => {
    const orphan = await runGatehouse(['serve', '--allow-paths=/a']);
    assert.equal(orphan.code, 1);
    assert.match(orphan.stderr, /--allow-paths requires --upstream/);
    const both = await runGatehouse(['serve', '--upstream=http://127.0.0.1:1', '--allow-paths=/a', '--ignore-paths=/b', '--authorization-mode=RBAC']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /--authorization-mode must be Webhook or unset; --allow-paths and --ignore-paths are mutually exclusive/);
    assert.equal(both.stderr.trim().split('\n').length, 1);
    const apf = await runGatehouse(['serve', '--upstream=http://127.0.0.1:1', '--enable-priority-and-fairness']);
    assert.equal(apf.code, 1);
    assert.match(
      apf.stderr,
      /--upstream keeps the plain in-flight limits \(no FlowSchemas of its own\): --enable-priority-and-fairness must be false or unset/,
    );
    const fieldsOrphan = await runGatehouse(['serve', '--auth-header-fields-enabled']);
    assert.match(fieldsOrphan.stderr, /--auth-header-fields-enabled requires --upstream/);
    const badName = await runGatehouse(['serve', '--upstream=http://127.0.0.1:1', '--auth-header-user-field-name=x user']);
    assert.match(badName.stderr, /invalid value "x user" for --auth-header-user-field-name: must be an HTTP header name/);
    const badSep = await runGatehouse(['serve', '--upstream=http://127.0.0.1:1', '--auth-header-groups-field-separator=']);
    assert.match(badSep.stderr, /invalid value "" for --auth-header-groups-field-separator: must not be empty/);
    const same = await runGatehouse(['serve', '--upstream=http://127.0.0.1:1', '--auth-header-groups-field-name=X-Remote-User']);
    assert.match(same.stderr, /--auth-header-groups-field-name: must differ from --auth-header-user-field-name/);
    const badBool = await runGatehouse(['serve', '--upstream=http://127.0.0.1:1', '--auth-header-fields-enabled=yes']);
    assert.match(badBool.stderr, /invalid value "yes" for --auth-header-fields-enabled: must be true or false/);
    const scheme = await runGatehouse(['serve', '--upstream=ftp://x']);
    assert.match(scheme.stderr, /invalid value "ftp:\/\/x" for --upstream: must be an http:\/\/, https:\/\/ or unix:\/\/\/ URL/);
    const noCluster = spawnTracked(
      process.execPath,
      [GATEHOUSE_BIN, 'serve', '--upstream=http://127.0.0.1:1', `--data-dir=${tempDir('nocluster')}`, `--secure-port=${await freePort()}`],
      { env: { ...process.env, KUBERNETES_SERVICE_HOST: '', KUBERNETES_SERVICE_PORT: '' } },
    );
    noCluster.child.stdin?.end();
    const { code } = await noCluster.waitExit(30_000);
    assert.equal(code, 1);
    assert.match(noCluster.stderr, /no --authentication-token-webhook-config-file and no in-cluster configuration \(KUBERNETES_SERVICE_HOST/);
  });
});
