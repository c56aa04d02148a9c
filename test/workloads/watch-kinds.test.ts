// A watch on every built-in kind the core backend stores besides the core
// kinds of the other suites: create, label, delete seen as ADDED, MODIFIED and
// DELETED in order, each event's object in the watched version with its kind,
// apiVersion and a newer resourceVersion, as kube's watch cache sends them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';

const labels = { app: 'w' };
const containers = [{ name: 'c', image: 'nginx' }];
const template = { metadata: { labels }, spec: { containers } };
const jobTemplate = { metadata: { labels }, spec: { containers, restartPolicy: 'Never' } };
const selector = { matchLabels: labels };

/** [collection path, apiVersion, kind, body beyond apiVersion/kind/metadata]. */
const KINDS: ReadonlyArray<readonly [string, string, string, Record<string, unknown>]> = [
  ['/api/v1/namespaces/default/pods', 'v1', 'Pod', { spec: { containers } }],
  ['/api/v1/namespaces/default/podtemplates', 'v1', 'PodTemplate', { template }],
  ['/api/v1/namespaces/default/replicationcontrollers', 'v1', 'ReplicationController', { spec: { template } }],
  ['/api/v1/namespaces/default/limitranges', 'v1', 'LimitRange', { spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] } }],
  ['/api/v1/namespaces/default/resourcequotas', 'v1', 'ResourceQuota', { spec: { hard: { pods: '10' } } }],
  ['/apis/apps/v1/namespaces/default/deployments', 'apps/v1', 'Deployment', { spec: { selector, template } }],
  ['/apis/apps/v1/namespaces/default/statefulsets', 'apps/v1', 'StatefulSet', { spec: { selector, template } }],
  ['/apis/apps/v1/namespaces/default/daemonsets', 'apps/v1', 'DaemonSet', { spec: { selector, template } }],
  ['/apis/apps/v1/namespaces/default/replicasets', 'apps/v1', 'ReplicaSet', { spec: { selector, template } }],
  ['/apis/apps/v1/namespaces/default/controllerrevisions', 'apps/v1', 'ControllerRevision', { revision: 1, data: { spec: {} } }],
  ['/apis/batch/v1/namespaces/default/jobs', 'batch/v1', 'Job', { spec: { template: jobTemplate } }],
  ['/apis/batch/v1/namespaces/default/cronjobs', 'batch/v1', 'CronJob', { spec: { schedule: '@daily', jobTemplate: { spec: { template: jobTemplate } } } }],
  [
    '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers',
    'autoscaling/v2',
    'HorizontalPodAutoscaler',
    { spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 } },
  ],
  [
    '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers',
    'autoscaling/v1',
    'HorizontalPodAutoscaler',
    { spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 } },
  ],
  ['/apis/policy/v1/namespaces/default/poddisruptionbudgets', 'policy/v1', 'PodDisruptionBudget', { spec: { minAvailable: 1, selector } }],
  ['/apis/networking.k8s.io/v1/namespaces/default/networkpolicies', 'networking.k8s.io/v1', 'NetworkPolicy', { spec: { podSelector: {} } }],
  [
    '/apis/networking.k8s.io/v1/namespaces/default/ingresses',
    'networking.k8s.io/v1',
    'Ingress',
    { spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } },
  ],
  ['/apis/networking.k8s.io/v1/ingressclasses', 'networking.k8s.io/v1', 'IngressClass', { spec: { controller: 'example.com/ingress' } }],
  ['/apis/scheduling.k8s.io/v1/priorityclasses', 'scheduling.k8s.io/v1', 'PriorityClass', { value: 1000 }],
  ['/apis/storage.k8s.io/v1/storageclasses', 'storage.k8s.io/v1', 'StorageClass', { provisioner: 'example.com/disk' }],
  ['/apis/storage.k8s.io/v1/csidrivers', 'storage.k8s.io/v1', 'CSIDriver', { spec: {} }],
  ['/apis/storage.k8s.io/v1/csinodes', 'storage.k8s.io/v1', 'CSINode', { spec: { drivers: [] } }],
  ['/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities', 'storage.k8s.io/v1', 'CSIStorageCapacity', { storageClassName: 'fast' }],
  [
    '/apis/storage.k8s.io/v1/volumeattachments',
    'storage.k8s.io/v1',
    'VolumeAttachment',
    { spec: { attacher: 'disk.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } } },
  ],
  ['/apis/node.k8s.io/v1/runtimeclasses', 'node.k8s.io/v1', 'RuntimeClass', { handler: 'runc' }],
];

describe('a watch on every built-in workload, policy, networking, scheduling and storage kind', () => {
  let s: TestServer;
  before(async () => {
    // Without the resourcequota controller: its status write would be one more MODIFIED on the quota's watch.
    s = await startTestServer({
      flags: ['--controllers=*,-serviceaccount,-root-ca-cert-publisher,-resourcequota', '--disable-admission-plugins=ServiceAccount'],
    });
  });
  after(async () => {
    await s?.close();
  });

  for (const [path, apiVersion, kind, body] of KINDS) {
    it(`${apiVersion} ${kind}`, async () => {
      const name = `watched-${kind.toLowerCase()}-${apiVersion.replace(/\W/g, '')}`;
      const list = await s.admin.request('GET', path);
      assert.equal(list.status, 200, list.text);
      const w = await s.admin.watch(`${path}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}&fieldSelector=metadata.name%3D${name}`);
      try {
        assert.equal(w.status, 200);
        const created = await s.admin.request('POST', path, { apiVersion, kind, metadata: { name }, ...body });
        assert.equal(created.status, 201, created.text);
        const labelled = await s.admin.request(
          'PATCH',
          `${path}/${name}`,
          { metadata: { labels: { watched: 'yes' } } },
          { 'content-type': 'application/merge-patch+json' },
        );
        assert.equal(labelled.status, 200, labelled.text);
        const deleted = await s.admin.request('DELETE', `${path}/${name}`);
        assert.equal(deleted.status, 200, deleted.text);
        const seen: string[] = [];
        let rv = BigInt(list.json.metadata.resourceVersion);
        // A Job deleted through batch/v1 orphans its pods by default (kube's DefaultGarbageCollectionPolicy): the orphan
        // finalizer is set, then removed by the collector, so MODIFIED events with a deletionTimestamp may come first.
        for (const want of ['ADDED', 'MODIFIED', 'DELETED']) {
          let ev = await w.next(5000);
          while (want === 'DELETED' && ev?.type === 'MODIFIED' && ev.object.metadata.deletionTimestamp) {
            seen.push('MODIFIED (deleting)');
            ev = await w.next(5000);
          }
          assert.ok(ev, `no ${want} event after ${seen.join(', ')}`);
          seen.push(ev.type);
          assert.equal(ev.type, want, seen.join(', '));
          assert.equal(ev.object.kind, kind);
          assert.equal(ev.object.apiVersion, apiVersion);
          assert.equal(ev.object.metadata.name, name);
          const next = BigInt(ev.object.metadata.resourceVersion);
          assert.ok(next > rv, `${want}: resourceVersion ${next} after ${rv}`);
          rv = next;
        }
      } finally {
        w.stop();
      }
    });
  }
});
