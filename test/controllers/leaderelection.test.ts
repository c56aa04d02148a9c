// The elector as client-go's leaderelection, over one store shared by several
// candidates (each as a separate process would be): exactly one holder, the
// Lease written as client-go writes it, release and takeover, a hand-edited
// or deleted Lease, the write fence of a paused leader, the exclusive store's
// takeover at start, and the metrics. Durations are shortened (1 s lease) so
// the file runs in seconds; nothing asserts on time.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../backends/core/store/memory.js';
import { StoreError, type Store } from '../../backends/core/store/types.js';
import { LeaderElector } from '../../backends/core/controllers/leaderelection/elector.js';
import { fencedStore } from '../../backends/core/controllers/leaderelection/fence.js';
import { recordOf } from '../../backends/core/controllers/leaderelection/record.js';
import { LeaderOnlyControllers } from '../../backends/core/controllers/leaderelection/runner.js';
import { leases } from '../../lib/registry/builtins/coordination.js';
import { objectKey } from '../../backends/core/keys.js';
import { prepareCreate } from '../../backends/core/objects.js';
import { registry } from '../../lib/metrics/registry.js';
import { eventually } from '../helpers/eventually.js';

const TIMING = { leaseDurationMs: 1000, renewDeadlineMs: 700, retryPeriodMs: 150 };
const KEY = objectKey(leases, 'kube-system', 'le-test');
const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

interface Candidate {
  readonly elector: LeaderElector;
  readonly events: string[];
  readonly logs: string[];
}

const running: LeaderElector[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop(false)));
});

function candidate(store: Store, identity: string, extra: { exclusive?: boolean; now?: () => number; name?: string } = {}): Candidate {
  const events: string[] = [];
  const logs: string[] = [];
  const elector = new LeaderElector(
    { namespace: 'kube-system', name: extra.name ?? 'le-test', identity, ...TIMING, ...(extra.exclusive ? { exclusive: true } : {}) },
    { store, leases, clock: Date.now, log: (m) => logs.push(m), ...(extra.now ? { now: extra.now } : {}) },
    { onStartedLeading: () => events.push('started'), onStoppedLeading: () => events.push('stopped') },
  );
  running.push(elector);
  return { elector, events, logs };
}

const memory = () => new MemoryStore({ historyWindowMs: 60_000 });

async function lease(store: Store) {
  const obj = await store.get(KEY);
  assert.ok(obj, 'the lease exists');
  return obj;
}

async function holder(store: Store, not?: string): Promise<string> {
  return eventually(`a holder other than ${not ?? 'nobody'}`, async () => {
    const obj = await store.get(KEY);
    const h = obj ? recordOf(obj).holderIdentity : '';
    return h !== '' && h !== not ? h : undefined;
  });
}

async function metric(name: string, label: string): Promise<number | undefined> {
  const text = await registry.metrics();
  const m = new RegExp(`^${name}\\{name="${label}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

describe('leader election on a Lease', () => {
  it('elects exactly one of three candidates and writes the Lease as client-go does', async () => {
    const store = memory();
    const cs = ['a', 'b', 'c'].map((id) => candidate(store, id));
    for (const c of cs) c.elector.start();
    const firsts = await Promise.all(cs.map((c) => c.elector.firstAttempt));
    assert.equal(firsts.filter(Boolean).length, 1, 'one first attempt wins');
    const h = await holder(store);
    const leader = cs.find((c) => c.elector.identity === h)!;
    assert.deepEqual(leader.events, ['started']);
    assert.ok(leader.elector.isLeading());
    for (const c of cs.filter((x) => x !== leader)) {
      assert.deepEqual(c.events, []);
      assert.equal(c.elector.isLeading(), false);
    }
    const spec = (await lease(store))['spec'] as Record<string, unknown>;
    assert.deepEqual(Object.keys(spec).sort(), ['acquireTime', 'holderIdentity', 'leaseDurationSeconds', 'leaseTransitions', 'renewTime']);
    assert.equal(spec['leaseDurationSeconds'], 1);
    assert.equal(spec['leaseTransitions'], 0);
    assert.match(String(spec['acquireTime']), MICRO);
    // Renewals move renewTime, keep acquireTime, and come from the holder alone.
    const before = await lease(store);
    const renewed = await eventually('a renewal', async () => {
      const now = await lease(store);
      return now.metadata.resourceVersion !== before.metadata.resourceVersion ? now : undefined;
    });
    const r = recordOf(renewed);
    assert.equal(r.holderIdentity, h);
    assert.equal(r.acquireTime, (before['spec'] as { acquireTime: string }).acquireTime);
    assert.notEqual(r.renewTime, (before['spec'] as { renewTime: string }).renewTime);
    assert.equal(await metric('leader_election_master_status', 'le-test'), 1);
  });

  it('hands over at once on release, counting a transition', async () => {
    const store = memory();
    const a = candidate(store, 'a');
    a.elector.start();
    assert.equal(await a.elector.firstAttempt, true);
    const b = candidate(store, 'b');
    b.elector.start();
    assert.equal(await b.elector.firstAttempt, false);
    await a.elector.stop(true);
    assert.deepEqual(a.events, ['started', 'stopped']);
    assert.equal(a.elector.isLeading(), false);
    const released = recordOf(await lease(store));
    assert.equal(released.holderIdentity, '');
    assert.equal(released.leaseDurationSeconds, 1);
    assert.equal(await holder(store), 'b');
    const r = recordOf(await lease(store));
    assert.equal(r.leaseTransitions, 1);
    assert.equal(r.leaseDurationSeconds, 1);
    await eventually('b leads', () => b.events.includes('started'));
  });

  it('steps down for a holder written by hand, even with a future renewTime, and takes over only once it went unchanged for a lease duration', async () => {
    const store = memory();
    const a = candidate(store, 'a');
    a.elector.start();
    assert.equal(await a.elector.firstAttempt, true);
    const cur = await lease(store);
    const future = new Date(Date.now() + 3600_000).toISOString().replace('Z', '000Z');
    await store.update(
      KEY,
      { ...structuredClone(cur), spec: { ...(cur['spec'] as object), holderIdentity: 'intruder', renewTime: future } },
      Number(cur.metadata.resourceVersion),
    );
    await eventually('a steps down', () => a.events.includes('stopped'));
    assert.equal(a.elector.isLeading(), false);
    // The intruder never renews: a takes the lease back after its own observation expires, as a new holder.
    assert.equal(await holder(store, 'intruder'), 'a');
    const r = recordOf(await lease(store));
    assert.equal(r.leaseTransitions, 1, 'the intruder → a is a transition');
    assert.deepEqual(a.events, ['started', 'stopped', 'started']);
    assert.ok(
      a.logs.some((l) => l.includes('held by intruder')),
      a.logs.join('\n'),
    );
  });

  it('recreates a deleted Lease', async () => {
    const store = memory();
    const a = candidate(store, 'a');
    a.elector.start();
    assert.equal(await a.elector.firstAttempt, true);
    const uid = (await lease(store)).metadata.uid;
    await store.delete(KEY);
    const again = await eventually('the lease recreated', async () => {
      const obj = await store.get(KEY);
      return obj && obj.metadata.uid !== uid ? obj : undefined;
    });
    assert.equal(recordOf(again).holderIdentity, 'a');
    assert.ok(a.elector.isLeading());
  });

  it('counts the slow path when the optimistic renewal conflicts', async () => {
    const store = memory();
    const a = candidate(store, 'a', { name: 'le-slow' });
    a.elector.start();
    assert.equal(await a.elector.firstAttempt, true);
    const key = objectKey(leases, 'kube-system', 'le-slow');
    const before = (await metric('leader_election_slowpath_total', 'le-slow')) ?? 0;
    const cur = (await store.get(key))!;
    // Someone else's write (a label) keeps the holder but moves the resourceVersion.
    await store.update(
      key,
      { ...structuredClone(cur), metadata: { ...structuredClone(cur.metadata), labels: { touched: 'yes' } } },
      Number(cur.metadata.resourceVersion),
    );
    await eventually('the slow path', async () => ((await metric('leader_election_slowpath_total', 'le-slow')) ?? 0) > before);
    assert.ok(a.elector.isLeading());
    assert.equal(recordOf((await store.get(key))!).holderIdentity, 'a');
  });

  it('fences the writes of a leader that was paused past its renew deadline', async () => {
    const store = memory();
    let skew = 0;
    const a = candidate(store, 'a', { now: () => performance.now() + skew });
    a.elector.start();
    assert.equal(await a.elector.firstAttempt, true);
    const fenced = fencedStore(store, () => a.elector.isLeading());
    const cm = (name: string) =>
      prepareCreate(leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'default' } }, Date.now());
    await fenced.create(objectKey(leases, 'default', 'written-while-leading'), cm('written-while-leading'));
    // As after SIGSTOP/SIGCONT: this process's clock moved on while nothing ran.
    skew = TIMING.leaseDurationMs * 5;
    await assert.rejects(
      fenced.create(objectKey(leases, 'default', 'written-after-pause'), cm('written-after-pause')),
      (err: unknown) => err instanceof StoreError && /not the leader/.test(err.message),
    );
    assert.equal(await store.get(objectKey(leases, 'default', 'written-after-pause')), undefined);
  });

  it('on an exclusive store, takes a lease an earlier run left behind at once', async () => {
    const store = memory();
    await store.create(
      KEY,
      prepareCreate(
        leases,
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: 'le-test', namespace: 'kube-system' },
          spec: { holderIdentity: 'earlier-run', leaseDurationSeconds: 3600, leaseTransitions: 4 },
        },
        Date.now(),
      ),
    );
    const shared = candidate(store, 'shared-store');
    shared.elector.start();
    assert.equal(await shared.elector.firstAttempt, false, 'on a shared store an unexpired holder is respected');
    await shared.elector.stop(false);
    const mine = candidate(store, 'restarted', { exclusive: true });
    mine.elector.start();
    assert.equal(await mine.elector.firstAttempt, true);
    assert.equal(recordOf(await lease(store)).leaseTransitions, 5);
  });

  it('refuses timings client-go refuses', () => {
    const store = memory();
    for (const t of [
      { leaseDurationMs: 1000, renewDeadlineMs: 1000, retryPeriodMs: 100 },
      { leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 500 },
      { leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 0 },
    ])
      assert.throws(
        () =>
          new LeaderElector(
            { namespace: 'kube-system', name: 'x', identity: 'i', ...t },
            { store, leases, clock: Date.now, log: () => undefined },
            { onStartedLeading() {}, onStoppedLeading() {} },
          ),
      );
  });

  it('runs the leader-only controllers while leading: hooks pass on a follower without starting them, stop on loss, start again on winning', async () => {
    const store = memory();
    const runs: string[] = [];
    const fleet = ['a', 'b'].map((id) => {
      let runner: LeaderOnlyControllers | undefined;
      const elector = new LeaderElector(
        { namespace: 'kube-system', name: 'le-test', identity: id, ...TIMING },
        { store, leases, clock: Date.now, log: () => undefined },
        { onStartedLeading: () => runner?.startAll(), onStoppedLeading: () => runner?.stopAll() },
      );
      running.push(elector);
      runner = new LeaderOnlyControllers(elector, () => undefined);
      runner.add({ name: 'gc', start: async () => void runs.push(`${id} start`), stop: () => void runs.push(`${id} stop`) });
      return { id, elector, hook: runner.hook('gc') };
    });
    fleet[0]!.elector.start();
    await fleet[0]!.hook();
    fleet[1]!.elector.start();
    await fleet[1]!.hook();
    assert.deepEqual(runs, ['a start'], 'the follower passed its hook without starting the controller');
    const cur = await lease(store);
    await store.delete(KEY, Number(cur.metadata.resourceVersion));
    await store.create(KEY, { ...structuredClone(cur), spec: { ...(cur['spec'] as object), holderIdentity: 'b', leaseTransitions: 1 } });
    // a reads b as holder and steps down; b, whose own observation finds itself holding, renews and leads.
    await eventually('a stopped and b started', () => runs.includes('a stop') && runs.includes('b start'));
    assert.equal(runs.indexOf('a start'), 0);
    await fleet[1]!.elector.stop(true);
    await eventually('a leads again', () => runs.filter((r) => r === 'a start').length === 2);
    assert.ok(runs.lastIndexOf('b stop') < runs.lastIndexOf('a start'), `b stopped before a started again: ${runs.join(', ')}`);
  });
});
