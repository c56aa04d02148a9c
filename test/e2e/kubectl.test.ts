// The user story of the quick start, as a new user would type it: a real
// `gatehouse serve` process on the default file store, driven by the
// machine's kubectl (and older kubectl releases for the older discovery path).
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Kubectl, findKubectl, startGatehouse, stopAll, type Gatehouse, type KubectlResult } from './helpers.js';

const kubectlPath = findKubectl();
after(stopAll);

/** kubectl 1.33 sends typed-client bodies (create configmap, create namespace) as protobuf. */
const PROTOBUF_BODY_REFUSED = /unknown format|UnsupportedMediaType/;
/** kubectl validates `create -f` against the served OpenAPI unless --validate=false. */
const OPENAPI_MISSING = /failed to download openapi/;

function manifest(obj: Record<string, unknown>): string {
  return JSON.stringify(obj);
}

function configMap(name: string, namespace: string, data: Record<string, string>): string {
  return manifest({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
}

function pod(name: string, namespace: string, nodeName?: string): string {
  return manifest({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'e2e' } },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.9' }] },
  });
}

/**
 * Runs a typed kubectl command (e.g. `create configmap`); when the server refuses kubectl's protobuf body
 * (not served yet), notes it and creates the same object from a JSON manifest instead.
 */
async function createTyped(t: TestContext, k: Kubectl, args: string[], fallbackManifest: string): Promise<void> {
  const r = await k.run(args);
  if (r.code === 0) return;
  assert.match(r.stderr, PROTOBUF_BODY_REFUSED, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
  t.diagnostic(`kubectl ${args.join(' ')}: protobuf request bodies are not served yet; created from a JSON manifest instead`);
  await k.ok(['create', '--validate=false', '-f', '-'], fallbackManifest);
}

function rows(table: string): string[][] {
  return table
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}|\s+/));
}

describe('kubectl against gatehouse serve on the file store', { skip: kubectlPath ? false : 'kubectl is not installed' }, () => {
  let gh: Gatehouse;
  let k: Kubectl;

  before(async () => {
    gh = await startGatehouse();
    k = new Kubectl(kubectlPath!, gh.kubeconfig);
  });

  it('get namespaces lists default, kube-system, kube-public and kube-node-lease', async () => {
    const out = await k.ok(['get', 'namespaces']);
    const table = rows(out);
    assert.deepEqual(table[0], ['NAME', 'STATUS', 'AGE']);
    assert.deepEqual(
      table
        .slice(1)
        .map((r) => r[0])
        .sort(),
      ['default', 'kube-node-lease', 'kube-public', 'kube-system'],
    );
    for (const r of table.slice(1)) assert.equal(r[1], 'Active');
  });

  it('api-resources lists every served type with its short names, and api-versions every group version', async () => {
    const out = await k.ok(['api-resources', '--no-headers', '-o', 'wide']);
    const byName = new Map<string, string>();
    for (const line of out.trim().split('\n')) {
      const cells = line.trim().split(/\s+/);
      // The APIVERSION column: `v1`, or `<group>/<version>` (autoscaling is listed at its preferred v2).
      const version = cells.find((c) => /^(v\d\w*|[a-z0-9.-]+\/v\d\w*)$/.test(c))!;
      byName.set(`${cells[0]}.${version}`, line);
    }
    // The types of the core API; later features add more (authentication, authorization reviews…).
    const served = [...byName.keys()];
    const missing = [
      'apiservices.apiregistration.k8s.io/v1',
      'clusterrolebindings.rbac.authorization.k8s.io/v1',
      'clusterroles.rbac.authorization.k8s.io/v1',
      'configmaps.v1',
      'endpoints.v1',
      'endpointslices.discovery.k8s.io/v1',
      'events.events.k8s.io/v1',
      'events.v1',
      'leases.coordination.k8s.io/v1',
      'namespaces.v1',
      'nodes.v1',
      'persistentvolumeclaims.v1',
      'persistentvolumes.v1',
      'pods.v1',
      'rolebindings.rbac.authorization.k8s.io/v1',
      'roles.rbac.authorization.k8s.io/v1',
      'secrets.v1',
      'serviceaccounts.v1',
      'services.v1',
    ].filter((name) => !served.includes(name));
    assert.deepEqual(missing, [], `api-resources lacks some types; it listed:\n${out}`);
    const shortNames: Record<string, string> = {
      configmaps: 'cm',
      namespaces: 'ns',
      pods: 'po',
      services: 'svc',
      serviceaccounts: 'sa',
      endpoints: 'ep',
      events: 'ev',
      persistentvolumes: 'pv',
      persistentvolumeclaims: 'pvc',
      nodes: 'no',
    };
    for (const [plural, short] of Object.entries(shortNames)) {
      assert.match(byName.get(`${plural}.v1`) ?? '', new RegExp(`^${plural}\\s+${short}\\s+v1\\s`), `${plural} should have short name ${short}`);
    }
    assert.match(byName.get('pods.v1')!, /\sPod\s+create,delete,deletecollection,get,list,patch,update,watch\b/);

    const versions = (await k.ok(['api-versions'])).trim().split('\n');
    assert.deepEqual(versions, [...versions].sort(), 'api-versions prints a sorted list');
    for (const gv of ['apiregistration.k8s.io/v1', 'coordination.k8s.io/v1', 'discovery.k8s.io/v1', 'events.k8s.io/v1', 'rbac.authorization.k8s.io/v1', 'v1']) {
      assert.ok(versions.includes(gv), `api-versions lists ${gv}: ${versions.join(' ')}`);
    }
    // Every group version of api-resources is in api-versions.
    for (const name of served) assert.ok(versions.includes(name.slice(name.indexOf('.') + 1)), name);
  });

  it('create configmap c1 --from-literal=a=b, then get configmap c1 -o json shows its data', async (t) => {
    await createTyped(t, k, ['create', 'configmap', 'c1', '--from-literal=a=b'], configMap('c1', 'default', { a: 'b' }));
    const cm = JSON.parse(await k.ok(['get', 'configmap', 'c1', '-o', 'json'])) as { kind: string; data: unknown; metadata: Record<string, unknown> };
    assert.equal(cm.kind, 'ConfigMap');
    assert.deepEqual(cm.data, { a: 'b' });
    assert.equal(cm.metadata.name, 'c1');
    assert.equal(cm.metadata.namespace, 'default');
    assert.match(String(cm.metadata.uid), /^[0-9a-f-]{36}$/);
    assert.ok(cm.metadata.resourceVersion);
  });

  it('get configmaps -w prints a new line for a later create and a later update', async () => {
    const watch = k.spawn(['get', 'configmaps', '-w']);
    try {
      await watch.waitFor('the initial listing with c1', (p) => /^c1\s+1\s/m.test(p.stdout));
      await k.ok(['create', '--validate=false', '-f', '-'], configMap('w1', 'default', { one: '1' }));
      await watch.waitFor('a line for the created w1', (p) => /^w1\s+1\s/m.test(p.stdout));
      const current = JSON.parse(await k.ok(['get', 'configmap', 'w1', '-o', 'json'])) as { data: Record<string, string> };
      current.data.two = '2';
      await k.ok(['replace', '--validate=false', '-f', '-'], JSON.stringify(current));
      await watch.waitFor('a line for the updated w1', (p) => /^w1\s+2\s/m.test(p.stdout));
      assert.ok(watch.running, `kubectl get -w ended early: ${watch.stderr}`);
      assert.equal(watch.stderr, '');
    } finally {
      watch.kill('SIGKILL');
      await watch.exited;
    }
  });

  it('get pods -A --chunk-size=2 -o wide shows pods of two namespaces in pages of two', async (t) => {
    await createTyped(t, k, ['create', 'namespace', 'apps'], manifest({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }));
    for (const name of ['web-1', 'web-2', 'web-3']) {
      await k.ok(['run', name, '--image=registry.k8s.io/pause:3.9', '--labels=app=e2e']);
    }
    await k.ok(['create', '--validate=false', '-f', '-'], pod('db-1', 'apps', 'node-a'));
    await k.ok(['create', '--validate=false', '-f', '-'], pod('db-2', 'apps'));

    const r = await k.run(['get', 'pods', '-A', '--chunk-size=2', '-o', 'wide', '-v=6']);
    assert.equal(r.code, 0, r.stderr);
    const table = rows(r.stdout.replace('NOMINATED NODE', 'NOMINATED_NODE').replace('READINESS GATES', 'READINESS_GATES'));
    assert.deepEqual(table[0], ['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED_NODE', 'READINESS_GATES']);
    assert.deepEqual(
      table
        .slice(1)
        .map((row) => `${row[0]}/${row[1]}`)
        .sort(),
      ['apps/db-1', 'apps/db-2', 'default/web-1', 'default/web-2', 'default/web-3'],
    );
    const db1 = table.find((row) => row[1] === 'db-1')!;
    assert.equal(db1[7], 'node-a', 'the NODE column shows spec.nodeName');
    assert.equal(db1[2], '0/1');
    // Five pods in chunks of two: three list requests, the later ones with a continue token.
    const listCalls = r.stderr.split('\n').filter((l) => /\/api\/v1\/pods\?[^ "]*limit=2/.test(l) && /GET/.test(l));
    assert.ok(listCalls.length >= 3, `expected at least 3 paged list requests, saw:\n${listCalls.join('\n')}`);
    assert.ok(
      listCalls.some((l) => /continue=/.test(l)),
      'later pages carry a continue token',
    );
  });

  it('delete namespace team-a returns, and afterwards the namespace and its objects are gone', async (t) => {
    await createTyped(t, k, ['create', 'namespace', 'team-a'], manifest({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }));
    await k.ok(['create', '--validate=false', '-f', '-'], configMap('settings', 'team-a', { mode: 'on' }));
    await k.ok(['create', '--validate=false', '-f', '-'], pod('worker', 'team-a'));
    assert.match(await k.ok(['get', 'configmaps,pods', '-n', 'team-a']), /settings[\s\S]*worker/);

    const del = await k.run(['delete', 'namespace', 'team-a', '--timeout=60s']);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, /namespace "team-a" deleted/);

    const get = await k.run(['get', 'namespace', 'team-a']);
    assert.equal(get.code, 1);
    assert.match(get.stderr, /Error from server \(NotFound\): namespaces "team-a" not found/);
    for (const path of ['/api/v1/namespaces/team-a/configmaps', '/api/v1/namespaces/team-a/pods']) {
      const list = await gh.admin.request('GET', path);
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.json.items, [], `${path} should be empty`);
    }
  });

  it('get cm nope answers with the NotFound message', async () => {
    const r = await k.run(['get', 'cm', 'nope']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), 'Error from server (NotFound): configmaps "nope" not found');
  });

  it("get --raw '/readyz?verbose' lists the checks and ends with healthz check passed", async () => {
    const out = (await k.ok(['get', '--raw', '/readyz?verbose'])).trim();
    assert.match(out, /^\[\+\]ping ok$/m);
    assert.match(out, /^\[\+\]shutdown ok$/m);
    assert.ok(out.endsWith('healthz check passed'), out);
  });

  it('kubectl create configmap and create namespace (protobuf request bodies) are accepted', async (t) => {
    const results: Array<[string, KubectlResult]> = [
      ['create configmap', await k.run(['create', 'configmap', 'proto-cm', '--from-literal=x=y'])],
      ['create namespace', await k.run(['create', 'namespace', 'proto-ns'])],
    ];
    if (results.some(([, r]) => r.code !== 0 && PROTOBUF_BODY_REFUSED.test(r.stderr))) t.todo('protobuf request bodies are not served yet (lib/protobuf)');
    for (const [what, r] of results) assert.equal(r.code, 0, `${what}: ${r.stderr}`);
  });

  it('kubectl create -f validates against the served OpenAPI', async (t) => {
    const r = await k.run(['create', '-f', '-'], configMap('validated', 'default', { k: 'v' }));
    if (r.code !== 0 && OPENAPI_MISSING.test(r.stderr)) t.todo('OpenAPI is not served yet (lib/openapi)');
    assert.equal(r.code, 0, r.stderr);
  });

  for (const version of ['1.27', '1.30']) {
    const older = findKubectl(version);
    it(`kubectl ${version} runs the core read commands and create configmap`, { skip: older ? false : `kubectl.${version} is not installed` }, async () => {
      const ko = new Kubectl(older!, gh.kubeconfig);
      const ns = rows(await ko.ok(['get', 'namespaces']));
      const names = ns.slice(1).map((r) => r[0]);
      for (const name of ['apps', 'default', 'kube-node-lease', 'kube-public', 'kube-system'])
        assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);

      const resources = await ko.ok(['api-resources']);
      for (const [plural, short] of [
        ['configmaps', 'cm'],
        ['namespaces', 'ns'],
        ['pods', 'po'],
        ['services', 'svc'],
        ['persistentvolumeclaims', 'pvc'],
      ]) {
        assert.match(resources, new RegExp(`^${plural}\\s+${short}\\s+v1\\s`, 'm'));
      }
      assert.match(await ko.ok(['api-versions']), /^coordination\.k8s\.io\/v1$/m);

      await ko.ok(['create', 'configmap', `old-${version.replace('.', '-')}`, '--from-literal=v=' + version]);
      const cm = JSON.parse(await ko.ok(['get', 'cm', `old-${version.replace('.', '-')}`, '-o', 'json'])) as { data: unknown };
      assert.deepEqual(cm.data, { v: version });

      const pods = rows(await ko.ok(['get', 'pods', '-A', '--chunk-size=2', '-o', 'wide']));
      assert.equal(pods[0]![0], 'NAMESPACE');
      assert.equal(pods.length - 1, 5);

      const missing = await ko.run(['get', 'cm', 'nope']);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /configmaps "nope" not found/);
      assert.match(await ko.ok(['get', '--raw', '/readyz?verbose']), /healthz check passed\s*$/);
    });
  }
});
