// Seeing priority and fairness at work, through a started server: kube's
// apiserver_flowcontrol_* metrics on /metrics (rejections by reason, the
// executing and queued gauges, the wait histogram, the limits), and the
// /debug/api_priority_and_fairness/ dumps in kube's columns, for users
// allowed `get` on those paths (403 for the others). A watch waiting for
// its initial state holds the test level's one seat, so that requests queue,
// time out, overflow the queue and are cancelled on cue; each step waits for
// the gauges to show the state it needs, not for a time.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cutRequest, sleep, userLevel } from './fixture.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const DEBUG = '/debug/api_priority_and_fairness';
/**
 * How far ahead of the store the watch asks to start: the server's own writes
 * (its identity lease, controllers) must not initialize it while the test
 * still needs its seat held.
 */
const AHEAD = 100;

/** The value of one series in the Prometheus text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const set = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('priority and fairness metrics and debug dumps', { timeout: 120_000 }, () => {
  let dir: string;
  let s: TestServer;
  const as = (who: string, method: string, path: string, body?: unknown) => s.anonymous.request(method, path, body, { authorization: `Bearer ${who}-token` });
  /** Resolves once a gauge reads `want` (the admin's scrapes are exempt: they never queue behind the level under test). */
  const gauge = async (name: string, labels: Record<string, string>, want: number) => {
    let seen: number | undefined;
    for (let i = 0; i < 400; i++) {
      seen = sample((await s.admin.request('GET', '/metrics')).text, name, labels);
      if (seen === want) return;
      await sleep(25);
    }
    assert.fail(`${name} stayed at ${seen}, never ${want}`);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-apf-observe-'));
    await writeFile(join(dir, 'tokens.csv'), 'carol-token,carol,3,\ndave-token,dave,4,\n');
    s = await startTestServer({
      flags: ['--token-auth-file', join(dir, 'tokens.csv'), '--authorization-mode=RBAC', '--max-requests-inflight=2', '--max-mutating-requests-inflight=2'],
      hooks: { tooLargeWaitMs: 60_000 },
    });
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const role = (name: string, rules: unknown[]) =>
      s.admin.request('POST', `${rbac}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules });
    const bind = (name: string, user: string) =>
      s.admin.request('POST', `${rbac}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
      });
    const cms = { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] };
    assert.equal((await role('t-apf-debugger', [cms, { nonResourceURLs: [`${DEBUG}/*`], verbs: ['get'] }])).status, 201);
    assert.equal((await bind('t-apf-debugger', 'carol')).status, 201);
    assert.equal((await role('t-cm-reader', [cms])).status, 201);
    assert.equal((await bind('t-cm-reader', 'dave')).status, 201);
    // Carol's resource requests: one seat of four, one queue of one.
    const queuing = { queues: 1, handSize: 1, queueLengthLimit: 1 };
    await userLevel(s, 't-obs', 'carol', { nominalConcurrencyShares: 1, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing } }, () =>
      as('carol', 'GET', `${CMS}/ready`),
    );
  });
  after(async () => {
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('counts rejections by reason, executing and queued requests and waits, and dumps levels, queues and requests', async () => {
    const rv = Number(((await s.admin.request('GET', CMS)).json as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
    const watch = cutRequest(
      s,
      'carol-token',
      `${CMS}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=${rv + AHEAD}`,
    );
    const pair = { flow_schema: 't-obs', priority_level: 't-obs' };
    await gauge('apiserver_flowcontrol_current_executing_requests', pair, 1);

    // Queued (wait limit: a quarter of 4 s), then timed out; meanwhile the queue of one is full.
    const timedOut = cutRequest(s, 'carol-token', `${CMS}/a?timeout=4s`);
    await gauge('apiserver_flowcontrol_current_inqueue_requests', pair, 1);
    const levels = await as('carol', 'GET', `${DEBUG}/dump_priority_levels`);
    const requests = await as('carol', 'GET', `${DEBUG}/dump_requests?includeRequestDetails=1`);
    const full = await as('carol', 'GET', `${CMS}/b`);
    assert.equal(full.status, 429, full.text);
    assert.equal(await timedOut.done, 429);
    // Queued, then the client goes.
    const cut = cutRequest(s, 'carol-token', `${CMS}/c?timeout=8s`);
    await gauge('apiserver_flowcontrol_current_inqueue_requests', pair, 1);
    cut.abort();
    await cut.done;
    await gauge('apiserver_flowcontrol_current_inqueue_requests', pair, 0);
    const queues = await as('carol', 'GET', `${DEBUG}/dump_queues`);
    const metrics = (await s.admin.request('GET', '/metrics')).text;

    assert.equal(sample(metrics, 'apiserver_flowcontrol_rejected_requests_total', { ...pair, reason: 'queue-full' }), 1);
    assert.equal(sample(metrics, 'apiserver_flowcontrol_rejected_requests_total', { ...pair, reason: 'time-out' }), 1);
    assert.equal(sample(metrics, 'apiserver_flowcontrol_rejected_requests_total', { ...pair, reason: 'cancelled' }), 1);
    assert.equal(sample(metrics, 'apiserver_flowcontrol_current_executing_requests', pair), 1, 'the initializing watch');
    assert.equal(sample(metrics, 'apiserver_flowcontrol_current_inqueue_requests', pair), 0);
    assert.equal(sample(metrics, 'apiserver_flowcontrol_request_wait_duration_seconds_count', { ...pair, execute: 'false' }), 3);
    assert.equal(
      sample(metrics, 'apiserver_flowcontrol_request_wait_duration_seconds_bucket', { ...pair, execute: 'false', le: '0' }),
      1,
      'queue-full waited 0 s',
    );
    assert.equal(sample(metrics, 'apiserver_flowcontrol_request_wait_duration_seconds_bucket', { ...pair, execute: 'false', le: '+Inf' }), 3);
    assert.equal(sample(metrics, 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 't-obs' }), 1);
    assert.equal(sample(metrics, 'apiserver_flowcontrol_current_limit_seats', { priority_level: 't-obs' }), 1);
    assert.ok((sample(metrics, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: 'exempt', priority_level: 'exempt' }) ?? 0) > 0);
    assert.match(metrics, /# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram/);

    // The dumps: kube's columns, cells joined by "," and aligned (Go's tabwriter).
    assert.equal(levels.status, 200, levels.text);
    assert.match(levels.headers['content-type'] ?? '', /^text\/plain/);
    const levelRows = levels.text
      .trimEnd()
      .split('\n')
      .map((l) => l.split(/,\s*/));
    assert.deepEqual(levelRows[0], [
      'PriorityLevelName',
      'ActiveQueues',
      'IsIdle',
      'IsQuiescing',
      'WaitingRequests',
      'ExecutingRequests',
      'DispatchedRequests',
      'RejectedRequests',
      'TimedoutRequests',
      'CancelledRequests',
    ]);
    const obs = levelRows.find((r) => r[0] === 't-obs');
    assert.deepEqual(obs?.slice(0, 6), ['t-obs', '1', 'false', 'false', '1', '1'], levels.text);
    assert.ok(levelRows.some((r) => r[0] === 'exempt'));
    const cols = levels.text.split('\n')[0]!.indexOf('ActiveQueues');
    assert.equal(levels.text.split('\n')[1]!.indexOf(levelRows[1]![1]!, cols - 1), cols, 'columns aligned');

    assert.equal(requests.status, 200, requests.text);
    const reqRows = requests.text
      .trimEnd()
      .split('\n')
      .map((l) => l.split(/,\s*/));
    assert.deepEqual(reqRows[0]!.slice(0, 5), ['PriorityLevelName', 'FlowSchemaName', 'QueueIndex', 'RequestIndexInQueue', 'FlowDistingsher']);
    assert.equal(reqRows[0]!.length, 18);
    const waiting = reqRows.find((r) => r[0] === 't-obs');
    assert.ok(waiting, requests.text);
    assert.deepEqual(
      [waiting[1], waiting[2], waiting[3], waiting[4], waiting[9], waiting[10], waiting[11], waiting[14]],
      ['t-obs', '0', '0', 'carol', '0001-01-01T00:00:00Z', 'carol', 'get', 'a'],
    );

    assert.equal(queues.status, 200, queues.text);
    const queueRows = queues.text
      .trimEnd()
      .split('\n')
      .map((l) => l.split(/,\s*/));
    assert.deepEqual(queueRows[0], [
      'PriorityLevelName',
      'Index',
      'PendingRequests',
      'ExecutingRequests',
      'SeatsInUse',
      'NextDispatchR',
      'InitialSeatsSum',
      'MaxSeatsSum',
      'TotalWorkSum',
    ]);
    const q = queueRows.find((r) => r[0] === 't-obs');
    assert.deepEqual(q?.slice(0, 5), ['t-obs', '0', '0', '1', '1'], queues.text);
    assert.match(q![5]!, /^\d+\.\d{8}ss$/);
    assert.ok(!queueRows.some((r) => r[0] === 'exempt'), 'a level without queues has no rows');
    const names = levelRows.slice(1).map((r) => r[0]!);
    assert.deepEqual(names, [...names].sort(), 'levels by name');

    // The watch initializes once the store reaches its resourceVersion: its seat is free, the gauge back to zero.
    let created = 0;
    for (; created < 2 * AHEAD; created++) {
      const made = await s.admin.request('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `t-obs-${created}` } });
      assert.equal(made.status, 201, made.text);
      if (sample((await s.admin.request('GET', '/metrics')).text, 'apiserver_flowcontrol_current_executing_requests', pair) === 0) break;
    }
    assert.ok(created < 2 * AHEAD, 'the watch never initialized');
    assert.equal((await as('carol', 'GET', `${CMS}/nothing`)).status, 404);
    const after = (await s.admin.request('GET', '/metrics')).text;
    assert.equal(sample(after, 'apiserver_flowcontrol_current_executing_requests', pair), 0);
    watch.abort();
  });

  it('the dumps need get on their path: a user without it gets 403, and an unknown dump is 404', async () => {
    for (const dump of ['dump_priority_levels', 'dump_queues', 'dump_requests']) {
      const r = await as('dave', 'GET', `${DEBUG}/${dump}`);
      assert.equal(r.status, 403, r.text);
      assert.match((r.json as { message: string }).message, new RegExp(`cannot get path "${DEBUG}/${dump}"`));
    }
    assert.equal((await as('carol', 'GET', `${DEBUG}/dump_nothing`)).status, 404);
  });
});
