// Fair queuing through a started server, where round robin would differ: on
// a level of one seat, alice's request holds the seat for its whole
// deadline, so her queue is charged that long in virtual time; bob's four
// quick requests, queued behind it, all run before alice's next request
// (round robin would give alice the seat back after bob's first, for the
// eight seconds her next request holds it).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { NS, register, servingPki, startEcho, waitAvailable, type EchoBackend } from '../aggregation/fixture.js';
import { dealHand, flowHash } from '../../gateway/flowcontrol/shuffle.js';
import { cutRequest, sleep, userLevel } from './fixture.js';

const ECHOES = `/apis/echo.gatehouse.dev/v1/namespaces/${NS}/echoes`;
const QUEUING = { queues: 8, handSize: 1, queueLengthLimit: 10 };

describe('fair queuing through the gateway', { timeout: 120_000 }, () => {
  let dir: string;
  let s: TestServer;
  let echo: EchoBackend;
  // Bob's name is chosen so that his flow's queue is not alice's.
  const queueOf = (user: string) => dealHand(flowHash(`t-fq\u0000${user}`), QUEUING.queues, QUEUING.handSize)[0];
  let bob = 'bob';
  const as = (token: string, path: string) => s.anonymous.request('GET', path, undefined, { authorization: `Bearer ${token}` });

  before(async () => {
    for (let i = 0; queueOf(bob) === queueOf('alice'); i++) bob = `bob-${i}`;
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-apf-fq-'));
    await writeFile(join(dir, 'tokens.csv'), `alice-token,alice,1,fq\nbob-token,${bob},2,fq\n`);
    s = await startTestServer({
      flags: [
        '--token-auth-file',
        join(dir, 'tokens.csv'),
        '--authorization-mode=AlwaysAllow',
        '--max-requests-inflight=2',
        '--max-mutating-requests-inflight=2',
      ],
    });
    const pem = servingPki(dir, 'echo');
    echo = await startEcho(pem, await readFile(join(s.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8'));
    await register(s.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: pem.ca });
    await waitAvailable(s.admin, 'v1.echo.gatehouse.dev', 'True');
    // One seat of four (one share beside kube's 490), never more.
    await userLevel(s, 't-fq', 'group:fq', { nominalConcurrencyShares: 1, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: QUEUING } }, () =>
      as('bob-token', `${ECHOES}/ready`),
    );
  });
  after(async () => {
    await echo?.close();
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a flow that held the seat long waits while a flow of quick requests catches up', async () => {
    // Alice holds the seat for 1 s (her deadline; the backend never answers), then queues a request of 8 s.
    const first = cutRequest(s, 'alice-token', `${ECHOES}/hang?timeout=1s`);
    // Her second request is sent once the first holds the seat (it reached the backend), not after a guess of how long that takes.
    await eventually("alice's first request to reach the backend", () => echo.seen.has(`${ECHOES}/hang`), { intervalMs: 10 });
    const second = cutRequest(s, 'alice-token', `${ECHOES}/hang?timeout=8s`);
    await sleep(50);
    const bobs = await Promise.all([1, 2, 3, 4].map((i) => as('bob-token', `${ECHOES}/bob-${i}`)));
    const secondState = await Promise.race([second.done.then((code) => `answered ${code}`), sleep(0).then(() => 'still running')]);
    second.abort();
    for (const r of bobs) assert.equal(r.status, 200, r.text);
    assert.equal(await first.done, 504);
    assert.equal(secondState, 'still running', "bob's four requests all ran before alice's second one, which has not reached its deadline");
  });
});
