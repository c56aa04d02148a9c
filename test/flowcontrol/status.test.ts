// FlowSchema status: the Dangling condition kube-apiserver's APF config
// consumer keeps — False/Found while the named PriorityLevelConfiguration
// exists, True/NotFound otherwise, kube's messages, written by server-side
// apply under kube's field manager — followed through create and delete of
// the level, and shown by kubectl's MissingPL column.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
type Cond = { type: string; status: string; reason: string; message: string; lastTransitionTime: string };
type FS = { metadata: { managedFields?: Array<Record<string, unknown>> }; status?: { conditions?: Cond[] } };

describe('FlowSchema Dangling condition', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  const dangling = async (name: string): Promise<Cond | undefined> =>
    ((await s.admin.request('GET', `${FC}/flowschemas/${name}`)).json as FS).status?.conditions?.find((c) => c.type === 'Dangling');

  /** The condition once it has the wanted status (a watch on the schema brings each write). */
  async function settled(name: string, status: 'True' | 'False'): Promise<Cond> {
    const w = await s.admin.watch(`${FC}/flowschemas?watch=1&fieldSelector=metadata.name%3D${name}`);
    try {
      for (;;) {
        const ev = await w.next(10_000);
        assert.ok(ev, `no Dangling=${status} on ${name}; last seen ${JSON.stringify(await dangling(name))}`);
        const c = (ev.object as FS).status?.conditions?.find((x) => x.type === 'Dangling');
        if (c?.status === status) return c;
      }
    } finally {
      w.stop();
    }
  }

  it("says False/Found on the bootstrap schemas, written by kube's field manager on status", async () => {
    const c = await settled('global-default', 'False');
    assert.equal(c.reason, 'Found');
    assert.equal(c.message, 'This FlowSchema references the PriorityLevelConfiguration object named "global-default" and it exists');
    assert.match(c.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const fs = (await s.admin.request('GET', `${FC}/flowschemas/global-default`)).json as FS;
    const entry = fs.metadata.managedFields?.find((m) => m['manager'] === 'api-priority-and-fairness-config-consumer-v1');
    assert.ok(entry, JSON.stringify(fs.metadata.managedFields));
    assert.equal(entry['operation'], 'Apply');
    assert.equal(entry['subresource'], 'status');
  });

  it('turns True/NotFound for a missing level, False when it is created, True again when it is deleted', async () => {
    const made = await s.admin.request('POST', `${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 't-dangling' },
      spec: { priorityLevelConfiguration: { name: 't-missing' }, matchingPrecedence: 300 },
    });
    assert.equal(made.status, 201, made.text);
    const gone = await settled('t-dangling', 'True');
    assert.equal(gone.reason, 'NotFound');
    assert.equal(gone.message, 'This FlowSchema references the PriorityLevelConfiguration object named "t-missing" but there is no such object');
    const env = { ...process.env, KUBECONFIG: s.kubeconfig };
    assert.match((await run('kubectl', ['get', 'flowschemas', 't-dangling'], { env })).stdout, /t-dangling\s+t-missing\s+300\s+<none>\s+\S+\s+True\s/);

    const pl = await s.admin.request('POST', `${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 't-missing' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } },
    });
    assert.equal(pl.status, 201, pl.text);
    const found = await settled('t-dangling', 'False');
    assert.equal(found.reason, 'Found');
    assert.match((await run('kubectl', ['get', 'flowschemas', 't-dangling'], { env })).stdout, /t-dangling\s+t-missing\s+300\s+<none>\s+\S+\s+False\s/);

    assert.equal((await s.admin.request('DELETE', `${FC}/prioritylevelconfigurations/t-missing`)).status, 200);
    assert.equal((await settled('t-dangling', 'True')).reason, 'NotFound');
    // One Dangling condition, never a second one beside it.
    const all = ((await s.admin.request('GET', `${FC}/flowschemas/t-dangling`)).json as FS).status?.conditions ?? [];
    assert.equal(all.length, 1);
  });
});
