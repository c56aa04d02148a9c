import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinRegistry } from '../../lib/registry/index.js';
import { buildDiscovery, negotiateAggregated, storageVersionHash } from '../../lib/discovery/index.js';

const CIDRS = [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }];
const discovery = buildDiscovery(builtinRegistry(), { serverAddressByClientCIDRs: CIDRS, version: { gitCommit: 'abc', runtime: 'node v20' } });

type Json = Record<string, unknown>;
const parse = (body: string) => JSON.parse(body) as Json;

test("storage version hashes equal kube-apiserver's", () => {
  assert.equal(storageVersionHash('', 'v1', 'Pod'), 'xPOwRZ+Yhw8=');
  assert.equal(storageVersionHash('', 'v1', 'Service'), '0/CO1lhkEBI=');
  assert.equal(storageVersionHash('', 'v1', 'ConfigMap'), 'qFsyl6wFWjQ=');
});

test('/api lists the core versions and the server addresses without an apiVersion', () => {
  assert.deepEqual(parse(discovery.api.body), { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: CIDRS });
  assert.equal(discovery.api.contentType, 'application/json');
  assert.match(discovery.api.etag, /^"[0-9a-f]{64}"$/);
});

test('/api/v1 lists resources and subresources as kube does', () => {
  const list = parse(discovery.resources('', 'v1')!.body) as { kind: string; apiVersion?: string; groupVersion: string; resources: Json[] };
  assert.equal(list.kind, 'APIResourceList');
  assert.equal(list.apiVersion, undefined);
  assert.equal(list.groupVersion, 'v1');
  const names = list.resources.map((r) => r['name']);
  assert.deepEqual(names, [...names].sort());
  assert.ok(names.includes('pods/status') && names.includes('namespaces/finalize'));
  assert.deepEqual(
    list.resources.find((r) => r['name'] === 'pods'),
    {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
      storageVersionHash: 'xPOwRZ+Yhw8=',
    },
  );
  assert.deepEqual(
    list.resources.find((r) => r['name'] === 'pods/status'),
    { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
  );
  // Go omits empty lists rather than sending [].
  assert.ok(!('shortNames' in list.resources.find((r) => r['name'] === 'secrets')!));
});

test('named group versions carry apiVersion and their group in groupVersion', () => {
  const list = parse(discovery.resources('events.k8s.io', 'v1')!.body);
  assert.equal(list['apiVersion'], 'v1');
  assert.equal(list['groupVersion'], 'events.k8s.io/v1');
  // Stored as core Events, as in kube.
  assert.equal((list['resources'] as Json[])[0]!['storageVersionHash'], 'r2yiGXH7wu8=');
  assert.equal(discovery.resources('apps', 'v1beta2'), undefined);
  assert.equal(discovery.resources('events.k8s.io', 'v1beta1'), undefined);
  // Scale is autoscaling/v1's, named on the subresource as kube does; hashes as a kube 1.33 cluster serves them.
  const apps = parse(discovery.resources('apps', 'v1')!.body)['resources'] as Json[];
  assert.deepEqual(
    apps.find((r) => r['name'] === 'deployments/scale'),
    { name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] },
  );
  assert.deepEqual(
    apps.filter((r) => r['storageVersionHash']).map((r) => `${r['name']} ${r['storageVersionHash']}`),
    ['controllerrevisions 85nkx63pcBU=', 'daemonsets dd7pWHUlMKQ=', 'deployments 8aSe+NMegvE=', 'replicasets P1RzHs8/mWQ=', 'statefulsets H+vl74LkKdo='],
  );
});

test('/apis lists named groups in priority order with preferred versions', () => {
  const list = parse(discovery.apis.body) as { kind: string; apiVersion: string; groups: Json[] };
  assert.equal(list.kind, 'APIGroupList');
  assert.equal(list.apiVersion, 'v1');
  assert.deepEqual(
    list.groups.map((g) => g['name']),
    [
      'apiregistration.k8s.io',
      'apps',
      'events.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'autoscaling',
      'batch',
      'certificates.k8s.io',
      'networking.k8s.io',
      'policy',
      'rbac.authorization.k8s.io',
      'storage.k8s.io',
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'scheduling.k8s.io',
      'coordination.k8s.io',
      'node.k8s.io',
      'discovery.k8s.io',
      'flowcontrol.apiserver.k8s.io',
      'access.gatehouse.dev',
    ],
  );
  assert.deepEqual(
    list.groups.find((g) => g['name'] === 'rbac.authorization.k8s.io'),
    {
      name: 'rbac.authorization.k8s.io',
      versions: [{ groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' },
    },
  );
});

test('/apis/<group> is one APIGroup', () => {
  assert.deepEqual(parse(discovery.group('coordination.k8s.io')!.body), {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: 'coordination.k8s.io',
    versions: [{ groupVersion: 'coordination.k8s.io/v1', version: 'v1' }],
    preferredVersion: { groupVersion: 'coordination.k8s.io/v1', version: 'v1' },
  });
  assert.equal(discovery.group('resource.k8s.io'), undefined);
});

test('aggregated discovery for /api holds the core group only', () => {
  const doc = discovery.aggregated('api');
  assert.equal(doc.contentType, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  const list = parse(doc.body) as { kind: string; apiVersion: string; items: Array<{ metadata: Json; versions: Json[] }> };
  assert.equal(list.kind, 'APIGroupDiscoveryList');
  assert.equal(list.apiVersion, 'apidiscovery.k8s.io/v2');
  assert.equal(list.items.length, 1);
  assert.equal(list.items[0]!.metadata['name'], undefined);
  const v1 = list.items[0]!.versions[0]! as { version: string; freshness: string; resources: Json[] };
  assert.equal(v1.version, 'v1');
  assert.equal(v1.freshness, 'Current');
  assert.deepEqual(
    v1.resources.find((r) => r['resource'] === 'namespaces'),
    {
      resource: 'namespaces',
      responseKind: { group: '', version: 'v1', kind: 'Namespace' },
      scope: 'Cluster',
      singularResource: 'namespace',
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['ns'],
      subresources: [
        { subresource: 'finalize', responseKind: { group: '', version: 'v1', kind: 'Namespace' }, verbs: ['update'] },
        { subresource: 'status', responseKind: { group: '', version: 'v1', kind: 'Namespace' }, verbs: ['get', 'patch', 'update'] },
      ],
    },
  );
});

test('aggregated discovery for /apis names each group in /apis order', () => {
  const list = parse(discovery.aggregated('apis').body) as { items: Array<{ metadata: Json; versions: Array<{ resources: Json[] }> }> };
  const groups = (parse(discovery.apis.body) as { groups: Json[] }).groups.map((g) => g['name']);
  assert.deepEqual(
    list.items.map((i) => i.metadata['name']),
    groups,
  );
  const apiservices = list.items[0]!.versions[0]!.resources[0]!;
  assert.deepEqual([apiservices['resource'], apiservices['scope'], apiservices['categories']], ['apiservices', 'Cluster', ['api-extensions']]);
  assert.equal(parse(discovery.aggregated('apis', 'v2beta1').body)['apiVersion'], 'apidiscovery.k8s.io/v2beta1');
});

test('the Accept header chooses between aggregated and legacy discovery', () => {
  assert.equal(negotiateAggregated(undefined), undefined);
  assert.equal(negotiateAggregated('application/json, */*'), undefined);
  assert.equal(
    negotiateAggregated(
      'application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
    ),
    'v2',
  );
  assert.equal(negotiateAggregated('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json'), 'v2beta1');
  assert.equal(negotiateAggregated('application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList'), undefined);
});

test("/version has the fields of client-go's version.Info", () => {
  const v = parse(discovery.version.body);
  assert.deepEqual(Object.keys(v), [
    'major',
    'minor',
    'emulationMajor',
    'emulationMinor',
    'minCompatibilityMajor',
    'minCompatibilityMinor',
    'gitVersion',
    'gitCommit',
    'gitTreeState',
    'buildDate',
    'goVersion',
    'compiler',
    'platform',
  ]);
  assert.deepEqual([v['major'], v['minor'], v['gitVersion'], v['gitCommit'], v['goVersion']], ['1', '33', 'v1.33.0-gatehouse', 'abc', 'node v20']);
  assert.match(String(v['platform']), /^[a-z0-9]+\/[a-z0-9]+$/);
});

test('documents are built once and identical documents share an ETag', () => {
  const again = buildDiscovery(builtinRegistry(), { serverAddressByClientCIDRs: CIDRS, version: { gitCommit: 'abc', runtime: 'node v20' } });
  assert.equal(again.apis.etag, discovery.apis.etag);
  assert.notEqual(discovery.apis.etag, discovery.api.etag);
  assert.equal(discovery.resources('', 'v1'), discovery.resources('', 'v1'));
  assert.ok(Object.isFrozen(discovery.api));
});
