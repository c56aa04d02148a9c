// Watches count while they initialize, then not (kube's APF watch
// initialization signal), through a started server: on a Reject level of one
// seat, a watch whose initial state cannot be sent yet (sendInitialEvents at
// a resourceVersion the store has not reached) holds the seat and another
// request of the level is refused; once its initial events are sent the seat
// is free while the watch stays open. A proxied watch holds its seat until
// the aggregated backend's response headers arrive.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NO_BACKGROUND_WRITES, startTestServer, type TestServer } from '../helpers/server.js';
import { NS, register, servingPki, startEcho, waitAvailable, type EchoBackend } from '../aggregation/fixture.js';
import type { Reply } from '../helpers/client.js';
import { cutRequest, sleep, userLevel } from './fixture.js';

const ECHOES = `/apis/echo.gatehouse.dev/v1/namespaces/${NS}/echoes`;
const CMS = '/api/v1/namespaces/default/configmaps';

describe('watches hold their priority-and-fairness seat while they initialize', { timeout: 120_000 }, () => {
  let dir: string;
  let s: TestServer;
  let echo: EchoBackend;
  const carol = (method: string, path: string, body?: unknown) => s.anonymous.request(method, path, body, { authorization: 'Bearer carol-token' });

  /** Sends GETs until one is refused (the seat is held) or 30 tries pass. */
  async function refusedGet(path: string): Promise<Reply> {
    let r: Reply | undefined;
    for (let i = 0; i < 30 && r?.status !== 429; i++) {
      r = await carol('GET', path);
      if (r.status !== 429) await sleep(50);
    }
    return r!;
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-apf-watch-'));
    await writeFile(join(dir, 'tokens.csv'), 'carol-token,carol,3,\n');
    s = await startTestServer({
      flags: [
        '--token-auth-file',
        join(dir, 'tokens.csv'),
        '--authorization-mode=AlwaysAllow',
        '--max-requests-inflight=2',
        '--max-mutating-requests-inflight=2',
        // The watch waits for the store's next revision: only the test's own write may make it.
        ...NO_BACKGROUND_WRITES,
      ],
      // A sendInitialEvents watch at a future resourceVersion waits this long for the store to get there.
      hooks: { tooLargeWaitMs: 60_000 },
    });
    const pem = servingPki(dir, 'echo');
    echo = await startEcho(pem, await readFile(join(s.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8'));
    await register(s.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: pem.ca });
    await waitAvailable(s.admin, 'v1.echo.gatehouse.dev', 'True');
    // One seat of four, never more (no borrowing), never queued: a held seat shows as a 429.
    await userLevel(s, 't-one', 'carol', { nominalConcurrencyShares: 1, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } }, () =>
      carol('GET', `${ECHOES}/ready`),
    );
  });
  after(async () => {
    await echo?.close();
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a watch waiting for its initial state holds the seat; once the initial events are sent it does not', async () => {
    const list = await s.admin.request('GET', CMS);
    const rv = Number((list.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
    const future = rv + 1;
    const w = cutRequest(
      s,
      'carol-token',
      `${CMS}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=${future}`,
    );
    await sleep(200);
    const refused = await refusedGet(`${CMS}/nothing`);
    assert.equal(refused.status, 429, `another request of the level while the watch initializes: ${refused.status} ${refused.text}`);
    // The store reaches the watch's resourceVersion: its initial events go out, and its seat is freed.
    const cm = await s.admin.request('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'apf-watch-init' } });
    assert.equal(cm.status, 201, cm.text);
    assert.equal(await w.headers, 200);
    let served: Reply | undefined;
    for (let i = 0; i < 30 && served?.status !== 404; i++) {
      served = await carol('GET', `${CMS}/nothing`);
      if (served.status !== 404) await sleep(50);
    }
    assert.equal(served?.status, 404, 'served (the object does not exist) while the watch stays open');
    w.abort();
  });

  it("a proxied watch holds the seat until the backend's response headers arrive, then frees it", async () => {
    const hung = cutRequest(s, 'carol-token', `${ECHOES}/hang?watch=1`);
    await sleep(200);
    const refused = await refusedGet(`${ECHOES}/other`);
    assert.equal(refused.status, 429, `while the backend has not answered: ${refused.status} ${refused.text}`);
    hung.abort();
    await hung.headers;
    // The client went: the seat is free again.
    let ok: Reply | undefined;
    for (let i = 0; i < 30 && ok?.status !== 200; i++) {
      ok = await carol('GET', `${ECHOES}/after-hang`);
      if (ok.status !== 200) await sleep(50);
    }
    assert.equal(ok?.status, 200);

    const streaming = cutRequest(s, 'carol-token', `${ECHOES}/stream?watch=1`);
    assert.equal(await streaming.headers, 200);
    const served = await carol('GET', `${ECHOES}/while-streaming`);
    assert.equal(served.status, 200, 'the open proxied watch holds no seat once its headers came');
    streaming.abort();
  });
});
