// Three `gatehouse serve` processes on one Redis (one prefix), each with its
// own data directory and so its own dev PKI and cluster CA: one leader runs
// kube-controller-manager's controllers, the others stand by. Exactly one
// holder; the controllers' work done once across the fleet (counted through
// watches); a changed kube-root-ca.crt put back once, with the leader's CA;
// SIGSTOP of the leader past its lease, and after SIGCONT no write of its
// controllers (its CA never reappears); SIGKILL and graceful takeover; the
// server identity leases appear, renew and are collected. Then the same
// election on the test Redis Cluster. Durations are shortened by flag.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { findKubectl, Kubectl, startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from '../store/fixtures/redis-env.js';
import { eventually } from '../helpers/eventually.js';
import type { WatchStream, WatchEvent } from '../helpers/client.js';
import { serverId } from '../../backends/core/controllers/identitylease.js';
import { RedisCluster, redisCliSkipReason, redisServerSkipReason } from './redis-server.js';

const skip = await redisSkipReason();

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
const ELECTION = `${LEASE}/gatehouse-controllers`;
const IDENTITY_SELECTOR = 'labelSelector=apiserver.kubernetes.io%2Fidentity%3Dkube-apiserver';

/** Shortened so takeovers happen in seconds (lease 3 s, renew deadline 2 s, retry 0.5 s; identity lease 4 s, renewed every second). */
const TIMING = [
  '--leader-elect-lease-duration=3s',
  '--leader-elect-renew-deadline=2s',
  '--leader-elect-retry-period=500ms',
  '--identity-lease-duration-seconds=4',
  '--identity-lease-renew-interval-seconds=1',
];

interface Member {
  readonly gh: Gatehouse;
  /** `<hostname>_<uuid>`, from its log. */
  readonly identity: string;
  readonly ca: string;
  readonly identityLease: string;
}

async function member(gh: Gatehouse): Promise<Member> {
  const re = /attempting to acquire leader lease kube-system\/gatehouse-controllers as (\S+)/;
  await gh.proc.waitFor('the elector starting', (p) => re.test(p.stdout + p.stderr));
  const identity = re.exec(gh.proc.stdout + gh.proc.stderr)![1]!;
  return { gh, identity, ca: readFileSync(`${gh.dataDir}/pki/ca.crt`, 'utf8'), identityLease: serverId(`${hostname()}:${gh.port}`) };
}

async function holderOf(m: Member): Promise<string> {
  const r = await m.gh.admin.request('GET', ELECTION);
  assert.equal(r.status, 200, r.text);
  return r.json.spec.holderIdentity as string;
}

/** The fleet member holding the lease, once one does (read through `via`). */
async function leaderOf(fleet: readonly Member[], via: Member, not?: Member): Promise<Member> {
  return eventually(
    `a leader${not ? ` other than ${not.identity}` : ''}`,
    async () => {
      const h = await holderOf(via);
      return fleet.find((m) => m.identity === h && m !== not);
    },
    { timeoutMs: 30_000 },
  );
}

async function masterStatus(m: Member): Promise<number> {
  const r = await m.gh.admin.request('GET', '/metrics');
  const match = /^leader_election_master_status\{name="gatehouse-controllers"\} (\d)$/m.exec(r.text);
  assert.ok(match, 'leader_election_master_status is exposed');
  return Number(match[1]);
}

/** Events until one satisfies `last` (included); fails if the stream ends or stalls first. */
async function takeUntil(w: WatchStream, last: (e: WatchEvent) => boolean, timeoutMs = 20_000): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for (;;) {
    const e = await w.next(timeoutMs);
    if (!e) throw new Error(`the watch ended or stalled after ${JSON.stringify(out.map((x) => `${x.type} ${x.object?.metadata?.name}`))}`);
    out.push(e);
    if (last(e)) return out;
  }
}

const named = (name: string) => (e: WatchEvent) => e.object?.metadata?.name === name;

async function create(m: Member, path: string, body: unknown): Promise<Record<string, any>> {
  const r = await m.gh.admin.request('POST', path, body);
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const cm = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra } });

describe('leader election across three processes on one redis', { skip }, () => {
  const prefix = uniquePrefix('leader');
  let fleet: Member[];
  let leader: Member;

  before(async () => {
    const flags = ['--storage-backend=redis', `--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`, '--authorization-mode=AlwaysAllow', ...TIMING];
    const ghs = await Promise.all([startGatehouse({ flags }), startGatehouse({ flags }), startGatehouse({ flags })]);
    fleet = await Promise.all(ghs.map(member));
    assert.equal(new Set(fleet.map((m) => m.ca)).size, 3, 'three dev PKIs, three cluster CAs');
  });
  after(async () => {
    await stopAll();
    await dropPrefix(prefix);
  });

  it('has exactly one holder, which alone reports itself master', async () => {
    leader = await leaderOf(fleet, fleet[0]!);
    for (const m of fleet) assert.equal(await holderOf(m), leader.identity, 'every process reads the same holder');
    const status = await Promise.all(fleet.map(masterStatus));
    assert.deepEqual(
      status,
      fleet.map((m) => (m === leader ? 1 : 0)),
    );
    const lease = (await leader.gh.admin.request('GET', ELECTION)).json;
    assert.equal(lease.spec.leaseDurationSeconds, 3);
    assert.match(lease.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(leader.gh.proc.stdout + leader.gh.proc.stderr, /successfully acquired lease kube-system\/gatehouse-controllers/);
    for (const m of fleet) {
      const ready = await m.gh.admin.request('GET', '/readyz');
      assert.equal(ready.status, 200, 'not being leader leaves /readyz alone');
      const live = await m.gh.admin.request('GET', '/livez?verbose');
      assert.match(live.text, /\[\+\]leaderElection ok/);
    }
  });

  it('shows every server identity lease, renewed', async () => {
    const leases = await eventually('three identity leases', async () => {
      const r = await leader.gh.admin.request('GET', `${LEASE}?${IDENTITY_SELECTOR}`);
      return r.json.items.length === 3 ? r.json.items : undefined;
    });
    assert.deepEqual(leases.map((l: any) => l.metadata.name).sort(), fleet.map((m) => m.identityLease).sort());
    for (const l of leases) {
      assert.equal(l.spec.leaseDurationSeconds, 4);
      assert.ok(l.spec.holderIdentity.startsWith(`${l.metadata.name}_`), l.spec.holderIdentity);
    }
    const one = leases[0];
    await eventually('a renewal', async () => {
      const r = await leader.gh.admin.request('GET', `${LEASE}/${one.metadata.name}`);
      return r.json.spec.renewTime !== one.spec.renewTime;
    });
    const kubectl = findKubectl();
    if (kubectl) {
      const out = await new Kubectl(kubectl, leader.gh.kubeconfig).run(['get', 'leases', '-n', 'kube-system']);
      assert.equal(out.code, 0, out.stderr);
      for (const m of fleet) assert.match(out.stdout, new RegExp(`^${m.identityLease}\\s`, 'm'));
      assert.match(out.stdout, new RegExp(`^gatehouse-controllers\\s+${leader.identity}\\s`, 'm'));
    }
  });

  it("puts a changed kube-root-ca.crt back once, with the leader's CA", async () => {
    const follower = fleet.find((m) => m !== leader)!;
    const path = '/api/v1/namespaces/default/configmaps';
    const current = await eventually('kube-root-ca.crt', async () => {
      const r = await follower.gh.admin.request('GET', `${path}/kube-root-ca.crt`);
      return r.status === 200 ? r.json : undefined;
    });
    assert.equal(current.data['ca.crt'], leader.ca, 'the leader published its CA');
    const from = (await follower.gh.admin.request('GET', path)).json.metadata.resourceVersion;
    const w = await follower.gh.admin.watch(`${path}?watch=1&resourceVersion=${from}`);
    try {
      const put = await follower.gh.admin.request('PUT', `${path}/kube-root-ca.crt`, { ...current, data: { 'ca.crt': 'edited' } });
      assert.equal(put.status, 200, put.text);
      const [edited, putBack] = await w.take(2, 20_000);
      assert.equal(edited!.type, 'MODIFIED', JSON.stringify(edited));
      assert.equal(edited!.object.data['ca.crt'], 'edited');
      assert.equal(putBack!.object.data['ca.crt'], leader.ca);
      await create(follower, path, cm('marker-root-ca'));
      const rest = await takeUntil(w, named('marker-root-ca'));
      assert.deepEqual(
        rest.map((e) => `${e.type} ${e.object.metadata.name}`),
        ['ADDED marker-root-ca'],
        'no second rewrite: no process fights the leader',
      );
    } finally {
      w.stop();
    }
  });

  it('empties and removes a deleted namespace once', async () => {
    const ns = 'doomed';
    await create(fleet[0]!, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const names = Array.from({ length: 20 }, (_, n) => `c${n}`);
    for (const n of names) await create(fleet[i(n) % 3]!, `/api/v1/namespaces/${ns}/configmaps`, cm(n));
    await eventually(
      'the namespace defaults',
      async () => (await fleet[0]!.gh.admin.request('GET', `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`)).status === 200,
    );
    const list = await fleet[1]!.gh.admin.request('GET', '/api/v1/configmaps');
    const w = await fleet[1]!.gh.admin.watch(`/api/v1/configmaps?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    const wn = await fleet[1]!.gh.admin.watch(
      `/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3D${ns}&resourceVersion=${list.json.metadata.resourceVersion}`,
    );
    try {
      assert.equal((await fleet[2]!.gh.admin.request('DELETE', `/api/v1/namespaces/${ns}`)).status, 200);
      const nsEvents = await takeUntil(wn, (e) => e.type === 'DELETED');
      assert.equal(nsEvents.filter((e) => e.type === 'DELETED').length, 1);
      await create(fleet[0]!, '/api/v1/namespaces/default/configmaps', cm('marker-ns'));
      const evs = (await takeUntil(w, named('marker-ns'))).filter((e) => e.object.metadata.namespace === ns);
      const deleted = evs.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name);
      assert.deepEqual(deleted.sort(), [...names, 'kube-root-ca.crt'].sort(), 'every object deleted exactly once');
      assert.deepEqual(
        evs.filter((e) => e.type !== 'DELETED').map((e) => `${e.type} ${e.object.metadata.name}`),
        [],
        'no other write to the namespace content',
      );
    } finally {
      w.stop();
      wn.stop();
    }
  });

  it('collects 100 owned objects once', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const owner = await create(leader, path, cm('owner'));
    const ref = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }];
    const names = Array.from({ length: 100 }, (_, n) => `owned-${n}`);
    await Promise.all(names.map((n) => create(fleet[i(n) % 3]!, path, cm(n, { ownerReferences: ref }))));
    const list = await fleet[2]!.gh.admin.request('GET', path);
    const w = await fleet[2]!.gh.admin.watch(`${path}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    try {
      assert.equal((await fleet[1]!.gh.admin.request('DELETE', `${path}/owner`)).status, 200);
      const evs = await takeUntil(
        w,
        (() => {
          let left = names.length + 1;
          return (e: WatchEvent) => e.type === 'DELETED' && --left === 0;
        })(),
        60_000,
      );
      await create(fleet[0]!, path, cm('marker-gc'));
      evs.push(...(await takeUntil(w, named('marker-gc'))));
      const deleted = evs.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name);
      assert.deepEqual(deleted.sort(), ['owner', ...names].sort(), 'the owner and each dependent deleted exactly once');
      assert.deepEqual(
        evs.filter((e) => e.type !== 'DELETED').map((e) => `${e.type} ${e.object.metadata.name}`),
        ['ADDED marker-gc'],
      );
    } finally {
      w.stop();
    }
  });

  it('deletes a CustomResourceDefinition with its objects once', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.le.example.com' },
      spec: {
        group: 'le.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    await create(fleet[0]!, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    const path = '/apis/le.example.com/v1/namespaces/default/widgets';
    // Established by the leader, served by every process.
    for (const m of fleet)
      await eventually(`widgets served by ${m.identity}`, async () => (await m.gh.admin.request('GET', path)).status === 200, { timeoutMs: 30_000 });
    const names = ['w1', 'w2', 'w3', 'w4', 'w5'];
    for (const n of names) await create(fleet[i(n) % 3]!, path, { apiVersion: 'le.example.com/v1', kind: 'Widget', metadata: { name: n } });
    const list = await fleet[1]!.gh.admin.request('GET', path);
    const w = await fleet[1]!.gh.admin.watch(`${path}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    try {
      assert.equal((await fleet[2]!.gh.admin.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)).status, 200);
      const evs = await takeUntil(
        w,
        (() => {
          let left = names.length;
          return (e: WatchEvent) => e.type === 'DELETED' && --left === 0;
        })(),
        30_000,
      );
      assert.deepEqual(
        evs.map((e) => `${e.type} ${e.object.metadata.name}`).sort(),
        names.map((n) => `DELETED ${n}`),
      );
      await eventually(
        'the CRD gone',
        async () => (await fleet[0]!.gh.admin.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)).status === 404,
        { timeoutMs: 30_000 },
      );
    } finally {
      w.stop();
    }
  });

  it('after SIGSTOP past the lease another leads, and after SIGCONT the old leader writes nothing', async () => {
    const paused = leader;
    const watcher = fleet.find((m) => m !== paused)!;
    const path = '/api/v1/namespaces/default/configmaps';
    paused.gh.proc.kill('SIGSTOP');
    try {
      leader = await leaderOf(fleet, watcher, paused);
      const current = await eventually("kube-root-ca.crt with the new leader's CA", async () => {
        const r = await watcher.gh.admin.request('GET', `${path}/kube-root-ca.crt`);
        return r.json.data?.['ca.crt'] === leader.ca ? r.json : undefined;
      });
      const from = (await watcher.gh.admin.request('GET', path)).json.metadata.resourceVersion;
      const w = await watcher.gh.admin.watch(`${path}?watch=1&resourceVersion=${from}`);
      try {
        // Changes the paused process's controllers would answer as soon as they run again.
        const put = await watcher.gh.admin.request('PUT', `${path}/kube-root-ca.crt`, { ...current, data: { 'ca.crt': 'edited while paused' } });
        assert.equal(put.status, 200, put.text);
        await takeUntil(w, (e) => e.object.data?.['ca.crt'] === leader.ca);
        paused.gh.proc.kill('SIGCONT');
        await paused.gh.proc.waitFor('the resumed process stepping down', (p) => /leader-only controllers stopped/.test(p.stdout + p.stderr), 30_000);
        // Give its queued watch events a chance, then mark the end of the window.
        const again = (await watcher.gh.admin.request('GET', `${path}/kube-root-ca.crt`)).json;
        assert.equal((await watcher.gh.admin.request('PUT', `${path}/kube-root-ca.crt`, { ...again, data: { 'ca.crt': 'edited after resume' } })).status, 200);
        const evs = await takeUntil(w, (e) => e.object.data?.['ca.crt'] === leader.ca);
        await create(watcher, path, cm('marker-sigcont'));
        evs.push(...(await takeUntil(w, named('marker-sigcont'))));
        const cas = evs.filter((e) => e.object.metadata.name === 'kube-root-ca.crt').map((e) => e.object.data['ca.crt']);
        assert.ok(!cas.includes(paused.ca), "no write of the old leader's controllers after the takeover");
        assert.deepEqual(cas, ['edited after resume', leader.ca], 'the new leader alone puts it back');
      } finally {
        w.stop();
      }
      assert.equal(await holderOf(paused), leader.identity, 'the resumed process respects the new holder');
      assert.equal(await masterStatus(paused), 0);
    } finally {
      paused.gh.proc.kill('SIGCONT');
    }
  });

  it('after SIGKILL of the leader another takes over, and its identity lease is collected', async () => {
    const killed = leader;
    const survivor = fleet.find((m) => m !== killed)!;
    const list = await survivor.gh.admin.request('GET', LEASE);
    const w = await survivor.gh.admin.watch(`${LEASE}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    try {
      await killed.gh.crash();
      leader = await leaderOf(fleet, survivor, killed);
      assert.ok(leader !== killed);
      const evs = await takeUntil(w, (e) => e.type === 'DELETED' && e.object.metadata.name === killed.identityLease, 30_000);
      const transitions = evs.filter((e) => e.object.metadata.name === 'gatehouse-controllers').map((e) => e.object.spec.holderIdentity);
      assert.ok(transitions.includes(leader.identity));
      assert.equal(evs.filter((e) => e.type === 'DELETED').length, 1, 'only the dead process lease is collected');
    } finally {
      w.stop();
    }
    fleet = fleet.filter((m) => m !== killed);
  });

  it('on a graceful stop the leader releases the lease and the other takes over', async () => {
    const stopping = leader;
    const other = fleet.find((m) => m !== stopping)!;
    const list = await other.gh.admin.request('GET', LEASE);
    const w = await other.gh.admin.watch(
      `${ELECTION.replace('/gatehouse-controllers', '')}?watch=1&fieldSelector=metadata.name%3Dgatehouse-controllers&resourceVersion=${list.json.metadata.resourceVersion}`,
    );
    try {
      const exited = stopping.gh.stop();
      const evs = await takeUntil(w, (e) => e.object.spec.holderIdentity === other.identity, 30_000);
      const holders = evs.map((e) => e.object.spec.holderIdentity);
      assert.equal(holders.at(-2), '', 'released (holder cleared) before the takeover');
      assert.equal(evs.at(-2)!.object.spec.leaseDurationSeconds, 1);
      const before = evs.at(-2)!.object.spec.leaseTransitions as number;
      assert.equal(evs.at(-1)!.object.spec.leaseTransitions, before + 1);
      assert.equal((await exited).code, 0);
      assert.match(stopping.gh.proc.stdout + stopping.gh.proc.stderr, /released lease kube-system\/gatehouse-controllers/);
    } finally {
      w.stop();
    }
  });
});

/** A stable spread of names over the three processes. */
function i(name: string): number {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h;
}

const clusterSkip = skip ?? (await redisServerSkipReason()) ?? redisCliSkipReason();

describe('leader election across three processes on a redis cluster', { skip: clusterSkip }, () => {
  let cluster: RedisCluster;
  let fleet: Member[];
  before(async () => {
    cluster = await RedisCluster.start(3);
    const flags = [
      '--storage-backend=redis',
      `--redis-url=${cluster.url}`,
      `--storage-prefix=${uniquePrefix('leader-cluster')}`,
      '--authorization-mode=AlwaysAllow',
      ...TIMING,
    ];
    const ghs = await Promise.all([startGatehouse({ flags }), startGatehouse({ flags }), startGatehouse({ flags })]);
    fleet = await Promise.all(ghs.map(member));
  });
  after(async () => {
    await stopAll();
    await cluster?.destroy();
  });

  it('has exactly one holder, and another after SIGKILL of it', async () => {
    const leader = await leaderOf(fleet, fleet[0]!);
    assert.deepEqual(
      await Promise.all(fleet.map(masterStatus)),
      fleet.map((m) => (m === leader ? 1 : 0)),
    );
    const survivor = fleet.find((m) => m !== leader)!;
    await leader.gh.crash();
    const next = await leaderOf(fleet, survivor, leader);
    await eventually('the new leader reports itself master', async () => (await masterStatus(next)) === 1);
    const lease = (await survivor.gh.admin.request('GET', ELECTION)).json;
    assert.equal(lease.spec.leaseTransitions, 1);
  });
});
