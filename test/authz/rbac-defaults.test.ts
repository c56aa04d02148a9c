// The default policy and aggregation: defaults created with kube's label and
// annotation, reconciled at every start (missing rules and subjects added,
// autoupdate=false left alone), and ClusterRole aggregation following
// labelled roles live.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { canI, identity, RBAC, roleBinding, userSubject } from './rbac-helpers.js';
import { eventually } from '../helpers/eventually.js';

const CR = `${RBAC}/clusterroles`;
const CRB = `${RBAC}/clusterrolebindings`;

// Restarts on the same data need a durable store: the file store (the Redis test run keeps its own per-server prefix).
const durable = process.env.GATEHOUSE_TEST_STORAGE === 'redis' ? 'a restart on Redis gets a fresh prefix' : false;

describe('default roles and bindings', { skip: durable }, () => {
  it('are created with the bootstrapping label and reconciled at the next start', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-rbac-defaults-'));
    try {
      let s = await startTestServer({ dataDir, flags: ['--storage-backend=file'] });
      try {
        const list = await s.admin.request('GET', `${CR}?labelSelector=kubernetes.io/bootstrapping%3Drbac-defaults`);
        const names = list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name);
        for (const n of [
          'cluster-admin',
          'admin',
          'edit',
          'view',
          'system:basic-user',
          'system:discovery',
          'system:public-info-viewer',
          'system:monitoring',
          'system:kube-scheduler',
          'system:volume-scheduler',
          'system:kube-controller-manager',
          'system:node',
          'system:node-proxier',
          'system:auth-delegator',
          'system:kube-aggregator',
          'system:kube-dns',
          'system:kubelet-api-admin',
          'system:node-bootstrapper',
          'system:node-problem-detector',
          'system:persistent-volume-provisioner',
          'system:controller:namespace-controller',
          'system:controller:ttl-controller',
        ]) {
          assert.ok(names.includes(n), `missing default ClusterRole ${n}`);
        }
        const viewer = (await s.admin.request('GET', `${CRB}/system:public-info-viewer`)).json;
        assert.deepEqual(
          viewer.subjects.map((x: { name: string }) => x.name),
          ['system:authenticated', 'system:unauthenticated'],
        );
        assert.equal(viewer.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true');
        const ctl = (await s.admin.request('GET', `${CRB}/system:controller:job-controller`)).json;
        assert.deepEqual(ctl.subjects, [{ kind: 'ServiceAccount', name: 'job-controller', namespace: 'kube-system' }]);

        // Damage two defaults; opt one out of reconciling.
        const basic = (await s.admin.request('GET', `${CR}/system:basic-user`)).json;
        basic.rules = [];
        assert.equal((await s.admin.request('PUT', `${CR}/system:basic-user`, basic)).status, 200);
        const disc = (await s.admin.request('GET', `${CR}/system:discovery`)).json;
        disc.rules = [];
        disc.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'] = 'false';
        assert.equal((await s.admin.request('PUT', `${CR}/system:discovery`, disc)).status, 200);
        const crb = (await s.admin.request('GET', `${CRB}/system:basic-user`)).json;
        crb.subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'extra' }];
        assert.equal((await s.admin.request('PUT', `${CRB}/system:basic-user`, crb)).status, 200);
      } finally {
        await s.close();
      }
      s = await startTestServer({ dataDir, flags: ['--storage-backend=file'] });
      try {
        const basic = (await s.admin.request('GET', `${CR}/system:basic-user`)).json;
        assert.equal(basic.rules.length, 2, 'missing rules are added back');
        assert.deepEqual((await s.admin.request('GET', `${CR}/system:discovery`)).json.rules, [], 'autoupdate=false is left alone');
        const crb = (await s.admin.request('GET', `${CRB}/system:basic-user`)).json;
        assert.deepEqual(
          crb.subjects.map((x: { name: string }) => x.name),
          ['extra', 'system:authenticated'],
          'missing subjects are added, others kept',
        );
      } finally {
        await s.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('ClusterRole aggregation', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  it('fills admin, edit and view from the aggregate-to-* roles', async () => {
    const view = (await s.admin.request('GET', `${CR}/view`)).json;
    const edit = (await s.admin.request('GET', `${CR}/edit`)).json;
    const adminRole = (await s.admin.request('GET', `${CR}/admin`)).json;
    const has = (rules: Array<{ resources?: string[]; verbs: string[] }>, res: string, verb: string) =>
      rules.some((r) => r.resources?.includes(res) && r.verbs.includes(verb));
    assert.ok(has(view.rules, 'pods', 'list') && !has(view.rules, 'secrets', 'get'));
    assert.ok(has(edit.rules, 'pods', 'list') && has(edit.rules, 'secrets', 'create') && !has(edit.rules, 'rolebindings', 'create'));
    assert.ok(has(adminRole.rules, 'pods', 'list') && has(adminRole.rules, 'secrets', 'create') && has(adminRole.rules, 'rolebindings', 'create'));
  });

  it('adds and removes rules live as labelled roles come and go', async () => {
    await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'agg' } });
    await s.admin.request('POST', `${RBAC}/namespaces/agg/rolebindings`, roleBinding('agg', 'v', 'ClusterRole', 'view', [userSubject('viewer')]));
    const viewer = await identity(s, 'viewer');
    try {
      const widgets = { verb: 'list', group: 'example.com', resource: 'widgets', namespace: 'agg' };
      assert.equal(await canI(viewer.client, widgets), false);
      const piece = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'widget-viewer', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
        rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }],
      };
      assert.equal((await s.admin.request('POST', CR, piece)).status, 201);
      await eventually('view to aggregate widget-viewer', () => canI(viewer.client, widgets), { timeoutMs: 5000 });
      // view is itself aggregated into edit and admin.
      await eventually(
        'admin to aggregate it through edit',
        async () => JSON.stringify((await s.admin.request('GET', `${CR}/admin`)).json.rules).includes('widgets'),
        { timeoutMs: 5000 },
      );

      // Changing the piece's rules and then dropping its label removes them again.
      const cur = (await s.admin.request('GET', `${CR}/widget-viewer`)).json;
      cur.metadata.labels = {};
      assert.equal((await s.admin.request('PUT', `${CR}/widget-viewer`, cur)).status, 200);
      await eventually('view to drop widget-viewer', async () => !(await canI(viewer.client, widgets)), { timeoutMs: 5000 });
      cur.metadata.labels = { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' };
      delete cur.metadata.resourceVersion;
      assert.equal((await s.admin.request('PUT', `${CR}/widget-viewer`, cur)).status, 200);
      await eventually('view to aggregate it again', () => canI(viewer.client, widgets), { timeoutMs: 5000 });
      assert.equal((await s.admin.request('DELETE', `${CR}/widget-viewer`)).status, 200);
      await eventually('view to forget the deleted role', async () => !(await canI(viewer.client, widgets)), { timeoutMs: 5000 });
      await eventually('admin to forget it', async () => !JSON.stringify((await s.admin.request('GET', `${CR}/admin`)).json.rules).includes('widgets'), {
        timeoutMs: 5000,
      });
    } finally {
      viewer.client.close();
    }
  });
});
