// The official JavaScript client, @kubernetes/client-node,
// against a started Gatehouse. 1.x runs on every Node this project supports;
// 2.x (whose undici 8 needs Node >= 22.19) runs beside it where the
// runtime allows, and says why it skips elsewhere. Typed CoreV1Api calls on
// ConfigMaps, and an informer that loses its connection twice: once
// resuming within the watch history, once coming back to a compacted
// history (410 Gone) after missing an add, an update and a delete, and
// re-listing: each change seen once, its cache equal to the server's list.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { devPkiPaths } from '../../certs/devpki.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { TcpGate } from '../helpers/tcpgate.js';
import { eventually } from '../helpers/eventually.js';

type Client = typeof import('@kubernetes/client-node');
type ConfigMap = import('@kubernetes/client-node').V1ConfigMap;

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const NODE_2X = major > 22 || (major === 22 && minor >= 19);

const CLIENTS: ReadonlyArray<{ name: string; load: () => Promise<Client>; skip: string | false }> = [
  { name: '@kubernetes/client-node 1.x', load: () => import('@kubernetes/client-node'), skip: false },
  {
    name: '@kubernetes/client-node 2.x',
    // Same API as 1.x; typed as 1.x so one test body serves both.
    load: async () => (await import('@kubernetes/client-node-2')) as unknown as Client,
    skip: NODE_2X ? false : `needs Node >= 22.19 (the engines of undici 8, which it loads), this is ${process.version}`,
  },
];

/** The history window the server keeps; the test moves the server's clock past it. */
const WINDOW_MS = 120_000;

/** The Status body of a failed typed call (client-node keeps it as a JSON string). */
function statusOf(err: unknown): { code: number; reason: string; message: string } {
  assert.ok(err instanceof Error && 'code' in err && 'body' in err, `not an ApiException: ${String(err)}`);
  const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
  assert.equal(body.kind, 'Status');
  assert.equal(body.code, err.code);
  return body;
}

const configMap = (name: string, data: Record<string, string>): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

for (const { name, load, skip } of CLIENTS) {
  describe(`${name} against a started Gatehouse`, { skip }, () => {
    let k8s: Client;
    let s: TestServer;
    let offsetMs = 0;
    let pem: { ca: string; cert: string; key: string };

    /** A KubeConfig for the admin at `server` (the real port, or a gate in front of it). */
    function kubeConfig(server: string): InstanceType<Client['KubeConfig']> {
      const kc = new k8s.KubeConfig();
      const b64 = (text: string) => Buffer.from(text).toString('base64');
      kc.loadFromOptions({
        clusters: [{ name: 'gatehouse', server, caData: b64(pem.ca), skipTLSVerify: false }],
        users: [{ name: 'admin', certData: b64(pem.cert), keyData: b64(pem.key) }],
        contexts: [{ name: 'admin', cluster: 'gatehouse', user: 'admin' }],
        currentContext: 'admin',
      });
      return kc;
    }

    async function createNamespace(ns: string): Promise<void> {
      const r = await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      assert.equal(r.status, 201, r.text);
    }

    before(async () => {
      k8s = await load();
      // The server's clock is the test's: history is compacted when the test moves it, not when time passes.
      s = await startTestServer({ flags: [`--watch-history=${WINDOW_MS / 1000}s`], hooks: { clock: () => Date.now() + offsetMs } });
      const pki = devPkiPaths(s.dataDir);
      const [ca, cert, key] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.adminCert, 'utf8'), readFile(pki.adminKey, 'utf8')]);
      pem = { ca, cert, key };
    });
    after(() => s?.close());

    it('CoreV1Api creates, reads, lists, patches (JSON, merge, strategic, apply) and deletes a ConfigMap', async () => {
      const ns = 'typed';
      await createNamespace(ns);
      const core = kubeConfig(s.url).makeApiClient(k8s.CoreV1Api);

      const created = await core.createNamespacedConfigMap({ namespace: ns, body: configMap('settings', { a: '1' }) });
      assert.equal(created.metadata?.namespace, ns);
      assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
      assert.ok(created.metadata?.creationTimestamp instanceof Date, 'creationTimestamp is decoded as a Date');
      assert.deepEqual(created.data, { a: '1' });

      const again = await core.createNamespacedConfigMap({ namespace: ns, body: configMap('settings', { a: '1' }) }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.equal(statusOf(again).reason, 'AlreadyExists');

      const read = await core.readNamespacedConfigMap({ name: 'settings', namespace: ns });
      assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);

      const list = await core.listNamespacedConfigMap({ namespace: ns });
      assert.deepEqual(
        list.items.filter((c) => c.metadata?.name === 'settings').map((c) => c.data),
        [{ a: '1' }],
      );
      assert.ok(list.items.every((c) => c.metadata?.namespace === ns));
      assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/);

      const { PatchStrategy, setHeaderOptions } = k8s;
      const patched = await core.patchNamespacedConfigMap(
        { name: 'settings', namespace: ns, body: [{ op: 'replace', path: '/data/a', value: '2' }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      assert.deepEqual(patched.data, { a: '2' });
      const merged = await core.patchNamespacedConfigMap(
        { name: 'settings', namespace: ns, body: { data: { b: '3' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      assert.deepEqual(merged.data, { a: '2', b: '3' });
      const strategic = await core.patchNamespacedConfigMap(
        { name: 'settings', namespace: ns, body: { metadata: { labels: { tier: 'web' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      assert.deepEqual(strategic.metadata?.labels, { tier: 'web' });
      const applied = await core.patchNamespacedConfigMap(
        {
          name: 'settings',
          namespace: ns,
          fieldManager: 'client-node-test',
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns }, data: { c: '4' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      );
      assert.deepEqual(applied.data, { a: '2', b: '3', c: '4' });
      assert.ok(applied.metadata?.managedFields?.some((f) => f.manager === 'client-node-test' && f.operation === 'Apply'));

      await core.deleteNamespacedConfigMap({ name: 'settings', namespace: ns });
      const gone = await core.readNamespacedConfigMap({ name: 'settings', namespace: ns }).then(
        () => undefined,
        (e: unknown) => e,
      );
      const st = statusOf(gone);
      assert.equal(st.reason, 'NotFound');
      assert.equal(st.message, 'configmaps "settings" not found');
    });

    it('an informer resumes after a short outage, and re-lists after 410 Gone after a long one: every change seen once, its cache equal to the server', async () => {
      const ns = 'informed';
      await createNamespace(ns);
      for (const n of ['keep', 'change', 'drop']) {
        const r = await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(n, { v: '1' }));
        assert.equal(r.status, 201, r.text);
      }
      const gate = await TcpGate.start(s.port);
      const core = kubeConfig(`https://127.0.0.1:${gate.port}`).makeApiClient(k8s.CoreV1Api);
      let lists = 0;
      const path = `/api/v1/namespaces/${ns}/configmaps`;
      const informer = k8s.makeInformer(kubeConfig(`https://127.0.0.1:${gate.port}`), path, () => {
        lists++;
        return core.listNamespacedConfigMap({ namespace: ns });
      });
      const events: string[] = [];
      const errors: unknown[] = [];
      let lastRv = '';
      for (const verb of [k8s.ADD, k8s.UPDATE, k8s.DELETE] as const) {
        informer.on(verb, (obj) => {
          events.push(`${verb} ${obj.metadata?.name} ${JSON.stringify(obj.data)}`);
          lastRv = obj.metadata?.resourceVersion ?? '';
        });
      }
      informer.on(k8s.ERROR, (err) => errors.push(err));
      try {
        await informer.start();
        const ours = (e: string) => !e.startsWith('add kube-root-ca.crt');
        assert.deepEqual(events.filter(ours).sort(), ['add change {"v":"1"}', 'add drop {"v":"1"}', 'add keep {"v":"1"}']);
        // A short outage inside the history window: the informer resumes from what it saw, no re-list,
        // and gets the change it missed exactly once.
        events.length = 0;
        gate.cut();
        await eventually('the informer to report the lost connection', () => errors.length === 1);
        const resumed = informer.start();
        const live = await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('live', { v: '1' }));
        assert.equal(live.status, 201, live.text);
        gate.open();
        await resumed;
        await eventually('the missed add', () => events.includes('add live {"v":"1"}'));
        assert.equal(lists, 1, 'a resume within the window does not re-list');
        assert.deepEqual(events, ['add live {"v":"1"}']);
        const seenRv: string = live.json.metadata.resourceVersion;
        assert.equal(lastRv, seenRv);

        // A longer one: the world changes and history moves past what the informer saw before it comes back.
        events.length = 0;
        gate.cut();
        await eventually('the informer to report the lost connection', () => errors.length === 2);
        const restarted = informer.start();
        assert.equal((await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('new', { v: '1' }))).status, 201);
        assert.equal(
          (
            await s.admin.request(
              'PATCH',
              `/api/v1/namespaces/${ns}/configmaps/change`,
              { data: { v: '2' } },
              { 'content-type': 'application/merge-patch+json' },
            )
          ).status,
          200,
        );
        assert.equal((await s.admin.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/drop`)).status, 200);
        offsetMs += WINDOW_MS + 60_000;
        const probe = await s.admin.request('GET', `${path}?watch=1&resourceVersion=${seenRv}&timeoutSeconds=5`);
        const first = JSON.parse(probe.text.split('\n')[0]!);
        assert.equal(first.type, 'ERROR', probe.text);
        assert.equal(first.object.code, 410, probe.text);

        gate.open();
        await restarted;
        await eventually('the re-list', () => events.some((e) => e.startsWith('delete drop')));
        // The watch after the re-list is live: a later add arrives, once.
        assert.equal((await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('later', { v: '1' }))).status, 201);
        await eventually('the later add', () => events.includes('add later {"v":"1"}'));

        assert.equal(lists, 2, 'one list at start, one after the 410');
        assert.deepEqual(events.sort(), ['add later {"v":"1"}', 'add new {"v":"1"}', 'delete drop {"v":"1"}', 'update change {"v":"2"}']);
        const server = await s.admin.request('GET', path);
        const state = (items: readonly ConfigMap[]) => items.map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`).sort();
        assert.deepEqual(state(informer.list(ns)), state(server.json.items));
        assert.equal(errors.length, 2, `only the two cuts are errors: ${errors.map(String).join('; ')}`);
      } finally {
        await informer.stop();
        await gate.close();
      }
    });
  });
}
