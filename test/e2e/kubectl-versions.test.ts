// Every installed kubectl from 1.27 to 1.33
// against one real `gatehouse serve`. Server-side apply (1.27 reads
// /openapi/v2 in protobuf for it), explain, client-side apply of a `kind:
// List` backup (validated against the served OpenAPI first), kubectl's own
// message for a kind no backend serves; and the everyday commands: get,
// create, client-side apply and re-apply, diff, get -w, --chunk-size, auth
// can-i, auth whoami (1.27 asks authentication.k8s.io/v1beta1 for it, later
// releases v1), create token (the token then used), api-resources, delete.
// Each version works in its own namespace, so versions run side by side.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kubectl, findKubectl, pkiPaths, startGatehouse, stopAll, tempDir, type Gatehouse } from './helpers.js';

const VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'];
const installed = VERSIONS.map((v) => [v, findKubectl(v)] as const).filter((e): e is readonly [string, string] => e[1] !== undefined);
after(stopAll);

const configMap = (name: string, data: Record<string, string>, namespace = 'default', labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, ...(labels ? { labels } : {}) },
  data,
});

/** A kubeconfig for the same server that authenticates with a bearer token only (no client certificate). */
function tokenKubeconfig(gh: Gatehouse, token: string): string {
  const file = join(tempDir('token-kubeconfig'), 'kubeconfig.json');
  const ca = readFileSync(pkiPaths(gh.dataDir).ca).toString('base64');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'sa',
      clusters: [{ name: 'gatehouse', cluster: { server: gh.url, 'certificate-authority-data': ca } }],
      users: [{ name: 'sa', user: { token } }],
      contexts: [{ name: 'sa', context: { cluster: 'gatehouse', user: 'sa' } }],
    }),
  );
  return file;
}

/** The requests kubectl logged at -v=6: `GET https://… 200 OK` up to 1.32, `"Response" verb="GET" url="https://…" status="200 OK"` from 1.33. */
function requestsLogged(stderr: string): Array<{ verb: string; url: string; status: string }> {
  return stderr.split('\n').flatMap((line) => {
    const m = /round_trippers\.go:\d+\] (?:(\w+) (https:\S+) (\d+)|"Response" verb="(\w+)" url="([^"]+)" status="(\d+))/.exec(line);
    return m ? [{ verb: (m[1] ?? m[4])!, url: (m[2] ?? m[5])!, status: (m[3] ?? m[6])! }] : [];
  });
}

/** The names kubectl printed with `-o name` (`configmap/x` lines). */
const names = (out: string): string[] =>
  out
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^configmaps?\//, ''));

const deployment = (name: string) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
    },
  });

/** A kind no server here serves: kubectl's own discovery-based refusal. */
const UNSERVED = JSON.stringify({ apiVersion: 'widgets.example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } });

describe(
  'kubectl 1.27–1.33 against one gatehouse serve',
  { concurrency: 3, skip: installed.length > 0 ? false : 'no kubectl.1.27 … kubectl.1.33 installed' },
  () => {
    let gh: Gatehouse;
    before(async () => {
      gh = await startGatehouse();
    });

    for (const [version, binary] of installed) {
      describe(`kubectl ${version}`, () => {
        const tag = version.replace('.', '-');
        const ns = `kv-${tag}`;
        let k: Kubectl;
        before(async () => {
          k = new Kubectl(binary, gh.kubeconfig);
          const r = await gh.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
          assert.equal(r.status, 201, r.text);
        });

        it('apply --server-side creates a ConfigMap', async () => {
          const out = await k.ok(['apply', '--server-side', '-f', '-'], JSON.stringify(configMap(`ssa-${tag}`, { a: '1' })));
          assert.match(out, new RegExp(`configmap/ssa-${tag} serverside-applied`));
          const got = await gh.admin.request('GET', `/api/v1/namespaces/default/configmaps/ssa-${tag}`);
          assert.equal(got.json.metadata.managedFields[0].operation, 'Apply');
        });

        it('explain configmap.data describes the field', async () => {
          const out = await k.ok(['explain', 'configmap.data']);
          assert.match(out, /KIND:\s+ConfigMap/);
          assert.match(out, /FIELD:\s+data\s+<map\[string\]string>/);
          assert.match(out, /Data contains the configuration data/);
        });

        it('apply -f of a kind: List applies each item', async () => {
          const list = {
            apiVersion: 'v1',
            kind: 'List',
            metadata: { resourceVersion: '' },
            items: [configMap(`one-${tag}`, { n: '1' }), configMap(`two-${tag}`, { n: '2' })],
          };
          const out = await k.ok(['apply', '-f', '-'], JSON.stringify(list));
          assert.match(out, new RegExp(`configmap/one-${tag} created`));
          assert.match(out, new RegExp(`configmap/two-${tag} created`));
          for (const name of [`one-${tag}`, `two-${tag}`]) {
            assert.equal((await gh.admin.request('GET', `/api/v1/namespaces/default/configmaps/${name}`)).status, 200);
          }
        });

        it('apply -f of a Deployment creates it', async () => {
          assert.match(await k.ok(['apply', '-f', '-'], deployment(`web-${tag}`)), new RegExp(`deployment.apps/web-${tag} created`));
        });

        it('apply -f of a kind nobody serves fails with kubectl\'s own "no matches for kind"', async () => {
          const r = await k.run(['apply', '-f', '-'], UNSERVED);
          assert.notEqual(r.code, 0);
          assert.match(r.stderr, /no matches for kind "Widget" in version "widgets.example.com\/v1"/);
          assert.doesNotMatch(r.stderr, /error validating data|content type that the client supports/);
        });

        it('create configmap, then get shows it as a table and as JSON', async () => {
          assert.match(await k.ok(['create', 'configmap', 'made', '-n', ns, '--from-literal=greeting=hello']), /configmap\/made created/);
          const table = await k.ok(['get', 'configmap', 'made', '-n', ns]);
          assert.match(table, /^NAME\s+DATA\s+AGE\n/);
          assert.match(table, /\nmade\s+1\s+\S+\n/);
          const obj = JSON.parse(await k.ok(['get', 'cm', 'made', '-n', ns, '-o', 'json']));
          assert.deepEqual(obj.data, { greeting: 'hello' });
          assert.equal(obj.metadata.namespace, ns);
        });

        it('client-side apply creates, a changed manifest is configured, the same one is unchanged', async () => {
          assert.match(await k.ok(['apply', '-f', '-'], JSON.stringify(configMap('applied', { a: '1', keep: 'x' }, ns))), /configmap\/applied created/);
          assert.match(await k.ok(['apply', '-f', '-'], JSON.stringify(configMap('applied', { a: '2' }, ns))), /configmap\/applied configured/);
          const got = await gh.admin.request('GET', `/api/v1/namespaces/${ns}/configmaps/applied`);
          // The three-way merge: `a` changed, `keep` (dropped from the manifest) removed.
          assert.deepEqual(got.json.data, { a: '2' });
          const last = JSON.parse(got.json.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
          assert.deepEqual(last.data, { a: '2' });
          assert.match(await k.ok(['apply', '-f', '-'], JSON.stringify(configMap('applied', { a: '2' }, ns))), /configmap\/applied unchanged/);
        });

        it('diff exits 1 with the change shown, and 0 with nothing when the manifest matches; nothing is written', async () => {
          await k.ok(['apply', '-f', '-'], JSON.stringify(configMap('diffed', { a: '1' }, ns)));
          const before = (await gh.admin.request('GET', `/api/v1/namespaces/${ns}/configmaps/diffed`)).json.metadata.resourceVersion;
          const changed = await k.run(['diff', '-f', '-'], JSON.stringify(configMap('diffed', { a: '2' }, ns)));
          assert.equal(changed.code, 1, changed.stderr);
          assert.match(changed.stdout, /^-\s+a: "1"$/m);
          assert.match(changed.stdout, /^\+\s+a: "2"$/m);
          const same = await k.run(['diff', '-f', '-'], JSON.stringify(configMap('diffed', { a: '1' }, ns)));
          assert.equal(same.code, 0, same.stderr);
          assert.equal(same.stdout, '');
          const after = (await gh.admin.request('GET', `/api/v1/namespaces/${ns}/configmaps/diffed`)).json;
          assert.equal(after.metadata.resourceVersion, before);
          assert.deepEqual(after.data, { a: '1' });
        });

        it('get -w prints the existing object, then a later create, and runs until stopped', async () => {
          await k.ok(['create', 'configmap', 'watched-1', '-n', ns, '--from-literal=n=1']);
          await k.ok(['label', 'configmap', 'watched-1', '-n', ns, 'set=watch']);
          const w = k.spawn(['get', 'configmaps', '-n', ns, '-l', 'set=watch', '-w', '--output-watch-events']);
          try {
            await w.waitFor('the existing object', (p) => /ADDED\s+watched-1\b/.test(p.stdout) || !p.running);
            const created = await gh.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('watched-2', { n: '2' }, ns, { set: 'watch' }));
            assert.equal(created.status, 201, created.text);
            await w.waitFor('the later create', (p) => /ADDED\s+watched-2\b/.test(p.stdout) || !p.running);
            assert.ok(w.running, `kubectl get -w ended by itself: ${w.stderr}`);
          } finally {
            w.kill();
          }
          await w.waitExit();
          assert.equal(w.stderr, '');
        });

        it('get --chunk-size=3 pages through seven objects and prints each once', async () => {
          const want = Array.from({ length: 7 }, (_, i) => `chunk-${i}`);
          for (const name of want) {
            const r = await gh.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(name, { n: name }, ns, { set: 'chunk' }));
            assert.equal(r.status, 201, r.text);
          }
          const r = await k.run(['get', 'configmaps', '-n', ns, '-l', 'set=chunk', '--chunk-size=3', '-o', 'name', '-v=6']);
          assert.equal(r.code, 0, r.stderr);
          assert.deepEqual(names(r.stdout).sort(), want);
          const gets = requestsLogged(r.stderr)
            .filter((q) => q.verb === 'GET' && q.url.startsWith(`${gh.url}/api/v1/namespaces/${ns}/configmaps?`))
            .map((q) => new URL(q.url).searchParams);
          assert.equal(gets.length, 3, r.stderr);
          assert.ok(
            gets.every((q) => q.get('limit') === '3'),
            r.stderr,
          );
          assert.equal(gets.filter((q) => q.has('continue')).length, 2, r.stderr);
        });

        it('auth can-i says yes to the admin and no to a service account with no role', async () => {
          const yes = await k.run(['auth', 'can-i', 'create', 'configmaps', '-n', ns]);
          assert.deepEqual([yes.code, yes.stdout.trim()], [0, 'yes'], yes.stderr);
          const no = await k.run(['auth', 'can-i', 'create', 'configmaps', '-n', ns, `--as=system:serviceaccount:${ns}:nobody`]);
          assert.deepEqual([no.code, no.stdout.trim()], [1, 'no'], no.stderr);
          const listed = await k.ok(['auth', 'can-i', '--list', '-n', ns]);
          assert.match(listed, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
        });

        it(`auth whoami names the admin (through authentication.k8s.io/${version === '1.27' ? 'v1beta1' : 'v1'})`, async () => {
          const r = await k.run(['auth', 'whoami', '-o', 'json', '-v=6']);
          assert.equal(r.code, 0, r.stderr);
          assert.deepEqual(JSON.parse(r.stdout).status.userInfo, { username: 'admin', groups: ['system:masters', 'system:authenticated'] });
          const posts = requestsLogged(r.stderr)
            .filter((q) => q.verb === 'POST')
            .map((q) => `${q.url} ${q.status}`);
          assert.deepEqual(posts, [`${gh.url}/apis/authentication.k8s.io/${version === '1.27' ? 'v1beta1' : 'v1'}/selfsubjectreviews 201`]);
          assert.match(await k.ok(['auth', 'whoami']), /Username\s+admin/);
        });

        it('create token issues a token that authenticates as the service account, and RBAC then applies to it', async () => {
          await k.ok(['create', 'serviceaccount', 'robot', '-n', ns]);
          const token = (await k.ok(['create', 'token', 'robot', '-n', ns])).trim();
          assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
          const asRobot = new Kubectl(binary, tokenKubeconfig(gh, token));
          const who = JSON.parse(await asRobot.ok(['auth', 'whoami', '-o', 'json'])).status.userInfo;
          assert.equal(who.username, `system:serviceaccount:${ns}:robot`);
          assert.ok(who.groups.includes(`system:serviceaccounts:${ns}`), JSON.stringify(who));
          // Authenticated but not yet allowed: a 403 naming the service account, not a 401.
          const denied = await asRobot.run(['get', 'configmaps', '-n', ns]);
          assert.notEqual(denied.code, 0);
          assert.match(denied.stderr, new RegExp(`User "system:serviceaccount:${ns}:robot" cannot list resource "configmaps"`));
          await k.ok(['create', 'rolebinding', 'robot-view', '-n', ns, '--clusterrole=view', `--serviceaccount=${ns}:robot`]);
          assert.match(await asRobot.ok(['get', 'configmaps', '-n', ns, '-o', 'name']), /configmap\//);
          const r = await gh.anonymous.request('GET', `/api/v1/namespaces/${ns}/configmaps`, undefined, { authorization: `Bearer ${token}` });
          assert.equal(r.status, 200, r.text);
        });

        it('api-resources lists core, RBAC and cluster-scoped types with their short names', async () => {
          const out = await k.ok(['api-resources']);
          assert.match(out, /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND$/m);
          assert.match(out, /^configmaps\s+cm\s+v1\s+true\s+ConfigMap$/m);
          assert.match(out, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
          assert.match(out, /^roles\s+rbac\.authorization\.k8s\.io\/v1\s+true\s+Role$/m);
          const cluster = (await k.ok(['api-resources', '--namespaced=false', '-o', 'name'])).trim().split('\n');
          assert.ok(cluster.includes('namespaces') && cluster.includes('clusterroles.rbac.authorization.k8s.io'), cluster.join(' '));
          assert.ok(!cluster.includes('configmaps'), cluster.join(' '));
        });

        it('delete removes one object by name and a set by label', async () => {
          for (const name of ['gone-1', 'gone-2', 'gone-3']) {
            const r = await gh.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(name, {}, ns, { set: 'gone' }));
            assert.equal(r.status, 201, r.text);
          }
          assert.match(await k.ok(['delete', 'configmap', 'gone-1', '-n', ns]), /configmap "gone-1" deleted/);
          assert.equal((await gh.admin.request('GET', `/api/v1/namespaces/${ns}/configmaps/gone-1`)).status, 404);
          const out = await k.ok(['delete', 'configmaps', '-n', ns, '-l', 'set=gone']);
          assert.match(out, /configmap "gone-2" deleted/);
          assert.match(out, /configmap "gone-3" deleted/);
          const left = await gh.admin.request('GET', `/api/v1/namespaces/${ns}/configmaps?labelSelector=set%3Dgone`);
          assert.deepEqual(left.json.items, []);
          const missing = await k.run(['delete', 'configmap', 'gone-1', '-n', ns]);
          assert.notEqual(missing.code, 0);
          assert.match(missing.stderr, /configmaps "gone-1" not found/);
        });
      });
    }
  },
);
