// API Priority and Fairness through a started server: classification (kube's
// response headers name the FlowSchema and priority level), fairness between
// two users of one small level while one floods slow requests through an
// aggregated backend, system:masters never queued, and the plain in-flight
// limit when the feature is off.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { NS, register, servingPki, startEcho, waitAvailable, type EchoBackend } from '../aggregation/fixture.js';
import { dealHand, flowHash } from '../../gateway/flowcontrol/shuffle.js';
import type { Reply } from '../helpers/client.js';

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
const ECHOES = `/apis/echo.gatehouse.dev/v1/namespaces/${NS}/echoes`;
const FS_UID = 'x-kubernetes-pf-flowschema-uid';
const PL_UID = 'x-kubernetes-pf-prioritylevel-uid';
const TOKENS = ['alice-token,alice,1,tenants', 'bob-token,bob,2,tenants', 'carol-token,carol,3,', 'robot-token,robot,4,system:serviceaccounts'].join('\n');

describe('API Priority and Fairness', { timeout: 120_000 }, () => {
  let dir: string;
  let s: TestServer;
  let echo: EchoBackend;
  // The anonymous client (no client certificate) with a bearer token: the token's user.
  const as = (token: string, method: string, path: string, body?: unknown) => s.anonymous.request(method, path, body, { authorization: `Bearer ${token}` });
  const uidOf = async (kind: string, name: string) =>
    ((await s.admin.request('GET', `${FC}/${kind}/${name}`)).json as { metadata: { uid: string } }).metadata.uid;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-apf-fair-'));
    await writeFile(join(dir, 'tokens.csv'), TOKENS);
    // A total of 4 seats; the test's level gets half of them (its shares equal the sum of kube's Limited levels).
    s = await startTestServer({
      flags: [
        '--token-auth-file',
        join(dir, 'tokens.csv'),
        '--authorization-mode=AlwaysAllow',
        '--max-requests-inflight=2',
        '--max-mutating-requests-inflight=2',
        '--request-timeout=20s',
      ],
    });
    const pem = servingPki(dir, 'echo');
    echo = await startEcho(pem, await readFile(join(s.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8'));
    await register(s.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: pem.ca });
    await waitAvailable(s.admin, 'v1.echo.gatehouse.dev', 'True');
  });
  after(async () => {
    await echo?.close();
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('classifies system:masters as exempt, a plain user as global-default, a service account group as workload-low', async () => {
    const admin = await s.admin.request('GET', '/api/v1/namespaces');
    assert.equal(admin.headers[FS_UID], await uidOf('flowschemas', 'exempt'));
    assert.equal(admin.headers[PL_UID], await uidOf('prioritylevelconfigurations', 'exempt'));
    const carol = await as('carol-token', 'GET', '/api/v1/namespaces');
    assert.equal(carol.headers[FS_UID], await uidOf('flowschemas', 'global-default'));
    assert.equal(carol.headers[PL_UID], await uidOf('prioritylevelconfigurations', 'global-default'));
    const robot = await as('robot-token', 'GET', '/api/v1/namespaces');
    assert.equal(robot.headers[FS_UID], await uidOf('flowschemas', 'service-accounts'));
    assert.equal(robot.headers[PL_UID], await uidOf('prioritylevelconfigurations', 'workload-low'));
    const probe = await s.anonymous.request('GET', '/healthz');
    assert.equal(probe.headers[FS_UID], await uidOf('flowschemas', 'probes'));
  });

  it('a FlowSchema created at run time takes effect, matching precedence first', async () => {
    const fs = await s.admin.request('POST', `${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 't-carol-nodes' },
      spec: {
        priorityLevelConfiguration: { name: 'workload-high' },
        matchingPrecedence: 300,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: 'carol' } }],
            resourceRules: [{ verbs: ['list'], apiGroups: [''], resources: ['nodes'], clusterScope: true }],
          },
        ],
      },
    });
    assert.equal(fs.status, 201, fs.text);
    const uid = (fs.json as { metadata: { uid: string } }).metadata.uid;
    let r: Reply | undefined;
    for (let i = 0; i < 50; i++) {
      r = await as('carol-token', 'GET', '/api/v1/nodes');
      if (r.headers[FS_UID] === uid) break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.equal(r?.headers[PL_UID], await uidOf('prioritylevelconfigurations', 'workload-high'));
    // Another resource, or a namespaced one, is still global-default.
    const other = await as('carol-token', 'GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(other.headers[FS_UID], await uidOf('flowschemas', 'global-default'));
  });

  it('a user flooding a small level gets 429s with Retry-After while another user of the level is served, and system:masters never waits', async () => {
    const queuing = { queues: 16, handSize: 2, queueLengthLimit: 2 };
    // The two flows' hands must differ for one to have a queue the other does not fill (fixed by the names).
    const hand = (u: string) =>
      dealHand(flowHash(`t-tenants\u0000${u}`), queuing.queues, queuing.handSize)
        .sort()
        .join(',');
    assert.notEqual(hand('alice'), hand('bob'));
    const pl = await s.admin.request('POST', `${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 't-tenants' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 245, limitResponse: { type: 'Queue', queuing } } },
    });
    assert.equal(pl.status, 201, pl.text);
    const fs = await s.admin.request('POST', `${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 't-tenants' },
      spec: {
        priorityLevelConfiguration: { name: 't-tenants' },
        matchingPrecedence: 500,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'Group', group: { name: 'tenants' } }],
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
          },
        ],
      },
    });
    assert.equal(fs.status, 201, fs.text);
    const plUid = (pl.json as { metadata: { uid: string } }).metadata.uid;
    for (let i = 0; i < 50; i++) {
      if ((await as('bob-token', 'GET', `${ECHOES}/ready`)).headers[PL_UID] === plUid) break;
      await new Promise((ok) => setTimeout(ok, 100));
    }

    // Alice: 12 workers sending requests that hold a seat until their 400 ms deadline (the backend never answers).
    let flooding = true;
    const aliceReplies: Reply[] = [];
    const worker = async () => {
      while (flooding) {
        const r = await as('alice-token', 'GET', `${ECHOES}/hang?timeout=400ms`);
        aliceReplies.push(r);
        // Still far beyond the level's two seats, without spinning on the machine's CPUs.
        if (r.status === 429) await new Promise((ok) => setTimeout(ok, 50));
      }
    };
    const workers = Array.from({ length: 12 }, worker);
    await new Promise((ok) => setTimeout(ok, 300));
    // Bob: a trickle, one request at a time; and the admin meanwhile.
    const bobReplies: Reply[] = [];
    const adminReplies: Reply[] = [];
    for (let i = 0; i < 6; i++) {
      bobReplies.push(await as('bob-token', 'GET', `${ECHOES}/bob-${i}`));
      adminReplies.push(await s.admin.request('GET', `${ECHOES}/admin-${i}`));
    }
    flooding = false;
    await Promise.all(workers);
    const count = (code: number) => aliceReplies.filter((r) => r.status === code).length;
    // Alice's requests did run (504 at their deadline) as well as being refused: she had her share, no more.
    assert.ok(count(504) > 0, `alice: ${count(504)} 504s, ${count(429)} 429s`);

    for (const r of bobReplies) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers[PL_UID], plUid);
    }
    const rejected = aliceReplies.filter((r) => r.status === 429);
    assert.ok(rejected.length > 0, `alice got no 429 in ${aliceReplies.length} replies: ${[...new Set(aliceReplies.map((r) => r.status))].join(',')}`);
    for (const r of rejected) {
      assert.equal(r.headers['retry-after'], '1');
      assert.equal((r.json as { reason: string }).reason, 'TooManyRequests');
    }
    assert.ok(
      aliceReplies.every((r) => r.status === 429 || r.status === 504),
      'alice gets only 429 (rejected or timed out in queue) or 504 (timed out executing)',
    );
    const exemptUid = await uidOf('prioritylevelconfigurations', 'exempt');
    for (const r of adminReplies) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers[PL_UID], exemptUid);
    }
  });

  it('a Reject level answers 429 at once when its seats are taken', async () => {
    // One share beside the 490 of the others: one seat of the four.
    const pl = await s.admin.request('POST', `${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 't-reject' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } },
    });
    assert.equal(pl.status, 201, pl.text);
    const fs = await s.admin.request('POST', `${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 't-reject' },
      spec: {
        priorityLevelConfiguration: { name: 't-reject' },
        matchingPrecedence: 400,
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: 'carol' } }],
            resourceRules: [{ verbs: ['get'], apiGroups: ['echo.gatehouse.dev'], resources: ['echoes'], namespaces: ['*'] }],
          },
        ],
      },
    });
    assert.equal(fs.status, 201, fs.text);
    const plUid = (pl.json as { metadata: { uid: string } }).metadata.uid;
    for (let i = 0; i < 50; i++) {
      if ((await as('carol-token', 'GET', `${ECHOES}/ready`)).headers[PL_UID] === plUid) break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    const holder = as('carol-token', 'GET', `${ECHOES}/hang?timeout=2s`);
    let refused: Reply | undefined;
    // The holder takes the one seat as soon as it arrives; until then a second request may still get it.
    for (let i = 0; i < 20 && refused?.status !== 429; i++) refused = await as('carol-token', 'GET', `${ECHOES}/hang?timeout=100ms`);
    assert.equal(refused?.status, 429, refused?.text);
    assert.equal(refused?.headers['retry-after'], '1');
    assert.equal((await holder).status, 504);
    // The seat is free again.
    assert.equal((await as('carol-token', 'GET', `${ECHOES}/after`)).status, 200);
  });
});

describe('with --enable-priority-and-fairness=false', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--enable-priority-and-fairness=false'] });
  });
  after(async () => {
    await s.close();
  });

  it('sets no APF headers (the plain in-flight limits apply)', async () => {
    const r = await s.admin.request('GET', '/api/v1/namespaces');
    assert.equal(r.status, 200);
    assert.equal(r.headers[FS_UID], undefined);
    assert.equal(r.headers[PL_UID], undefined);
  });
});
