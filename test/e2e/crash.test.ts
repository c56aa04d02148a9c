// Durability through the whole stack: configmaps created over HTTPS as fast as
// the server takes them, `kill -9` in the middle, a restart on the same data
// directory, and then every acknowledged (201) object is there with the
// resourceVersion it was acknowledged with, and nothing is half-written. The
// server's /metrics show the creates shared syncs (group commit).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { HttpsClient } from '../helpers/client.js';
import { startGatehouse, stopAll, tempDir } from './helpers.js';

after(stopAll);

const NAMESPACE = 'default';
const TOTAL = 400;
const CONCURRENCY = 32;
const KILL_AFTER_ACKS = 150;

interface ConfigMap {
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string; uid: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/** What was sent for object i: the content every stored copy must have. */
function dataFor(i: number): Record<string, string> {
  return { index: String(i), payload: `${'x'.repeat(200 + (i % 50))}-${i}` };
}

const nameFor = (i: number): string => `crash-${String(i).padStart(4, '0')}`;

async function listAll(client: HttpsClient, path: string): Promise<{ items: ConfigMap[]; resourceVersion: string }> {
  const items: ConfigMap[] = [];
  let cont = '';
  let resourceVersion = '';
  for (;;) {
    const r = await client.request('GET', `${path}?labelSelector=e2e%3Dcrash&limit=100${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    assert.equal(r.status, 200, r.text);
    // The body must be whole JSON: a half-written object would break the list.
    assert.ok(r.json, `list page is not JSON: ${r.text.slice(0, 200)}`);
    items.push(...(r.json.items as ConfigMap[]));
    resourceVersion ||= r.json.metadata.resourceVersion as string;
    cont = (r.json.metadata.continue as string | undefined) ?? '';
    if (!cont) return { items, resourceVersion };
  }
}

describe('the file store through kill -9 and restart', () => {
  it('keeps every acknowledged create with its resourceVersion and shows nothing half-written', async (t) => {
    const dataDir = tempDir('crash');
    const first = await startGatehouse({ dataDir, flags: ['--storage-backend=file'] });

    const acked = new Map<string, string>();
    let next = 0;
    let failures = 0;
    let killed = false;
    let killing = false;
    let syncFigures = '';
    const worker = async (): Promise<void> => {
      while (next < TOTAL && !killed) {
        const i = next++;
        const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: nameFor(i), labels: { e2e: 'crash' } }, data: dataFor(i) };
        const r = await first.admin.request('POST', `/api/v1/namespaces/${NAMESPACE}/configmaps`, body).catch(() => undefined);
        if (r?.status === 201) {
          const cm = r.json as ConfigMap;
          assert.equal(cm.metadata.name, nameFor(i));
          acked.set(cm.metadata.name, cm.metadata.resourceVersion);
        } else {
          failures++;
          if (r && !killed) assert.fail(`create ${nameFor(i)} answered ${r.status} before the kill: ${r.text}`);
        }
        if (acked.size >= KILL_AFTER_ACKS && !killing) {
          killing = true;
          // The other workers keep creating while this one reads the sync figures.
          syncFigures = await first.admin
            .request('GET', '/metrics')
            .then((m) => m.text)
            .catch(() => '');
          killed = true;
          // kill -9 while the other workers still have creates in flight.
          await first.crash();
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    assert.ok(killed, 'the server was killed mid-load');
    t.diagnostic(`acknowledged ${acked.size} creates, ${failures} cut by the kill`);
    assert.ok(acked.size >= KILL_AFTER_ACKS);
    // Group commit: the concurrent creates shared syncs of the log (each acknowledged one was in a synced batch).
    const figure = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(syncFigures)?.[1] ?? NaN);
    const syncs = figure('gatehouse_file_store_syncs_total');
    const writes = figure('gatehouse_file_store_writes_total');
    t.diagnostic(`before the kill: ${writes} writes made durable by ${syncs} syncs`);
    assert.ok(writes >= KILL_AFTER_ACKS && syncs >= 1 && syncs < writes, `${syncs} syncs for ${writes} writes`);

    const second = await startGatehouse({ dataDir, flags: ['--storage-backend=file'] });
    const { items, resourceVersion: listRv } = await listAll(second.admin, `/api/v1/namespaces/${NAMESPACE}/configmaps`);
    const stored = new Map(items.map((cm) => [cm.metadata.name, cm]));

    for (const [name, rv] of acked) {
      const cm = stored.get(name);
      assert.ok(cm, `acknowledged ${name} is missing after the restart`);
      assert.equal(cm.metadata.resourceVersion, rv, `${name} has the resourceVersion it was acknowledged with`);
    }
    // Objects whose create was cut by the kill may or may not exist, but only whole.
    for (const cm of items) {
      assert.equal(cm.kind, 'ConfigMap');
      const m = /^crash-(\d{4})$/.exec(cm.metadata.name);
      assert.ok(m, `unexpected object ${cm.metadata.name}`);
      assert.deepEqual(cm.data, dataFor(Number(m[1])), `${cm.metadata.name} has the content that was sent`);
      assert.equal(cm.metadata.namespace, NAMESPACE);
      assert.match(cm.metadata.uid, /^[0-9a-f-]{36}$/);
      const one = await second.admin.request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps/${cm.metadata.name}`);
      assert.equal(one.status, 200, one.text);
      assert.deepEqual(one.json, cm, 'get and list agree');
    }

    // Revisions keep increasing after the restart.
    const maxAcked = Math.max(...[...acked.values()].map(Number));
    assert.ok(Number(listRv) >= maxAcked, `list resourceVersion ${listRv} is not behind the last acknowledged ${maxAcked}`);
    const created = await second.admin.request('POST', `/api/v1/namespaces/${NAMESPACE}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'after-restart' },
      data: { a: 'b' },
    });
    assert.equal(created.status, 201, created.text);
    const afterRv = Number(created.json.metadata.resourceVersion);
    assert.ok(afterRv > maxAcked && afterRv > Number(listRv), `new resourceVersion ${afterRv} is above ${maxAcked} and ${listRv}`);
    const updated = await second.admin.request('PUT', `/api/v1/namespaces/${NAMESPACE}/configmaps/after-restart`, { ...created.json, data: { a: 'c' } });
    assert.equal(updated.status, 200, updated.text);
    assert.ok(Number(updated.json.metadata.resourceVersion) > afterRv);

    // A second clean restart sees the same state.
    const code = await second.stop();
    assert.deepEqual(code, { code: 0, signal: null });
    const third = await startGatehouse({ dataDir, flags: ['--storage-backend=file'] });
    const again = await listAll(third.admin, `/api/v1/namespaces/${NAMESPACE}/configmaps`);
    assert.deepEqual(
      again.items.map((cm) => [cm.metadata.name, cm.metadata.resourceVersion]),
      items.map((cm) => [cm.metadata.name, cm.metadata.resourceVersion]),
    );
    const last = await third.admin.request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps/after-restart`);
    assert.equal(last.status, 200);
    assert.deepEqual(last.json.data, { a: 'c' });
    await third.stop();
  });
});
