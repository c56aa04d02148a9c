// Watches count while they initialize, then not (kube's APF watch
// initialization signal), through a started server: on a Reject level of one
// seat, a watch whose initial state cannot be sent yet (sendInitialEvents at
// a resourceVersion the store has not reached) holds the seat and another
// request of the level is refused; once its initial events are sent the seat
// is free while the watch stays open. A proxied watch holds its seat until
// the aggregated backend's response headers arrive.
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { NS, register, servingPki, startEcho, waitAvailable, type EchoBackend } from '../aggregation/fixture.js';
import type { Reply } from '../helpers/client.js';

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
const ECHOES = `/apis/echo.gatehouse.dev/v1/namespaces/${NS}/echoes`;
const CMS = '/api/v1/namespaces/default/configmaps';
const PL_UID = 'x-kubernetes-pf-prioritylevel-uid';
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

describe('watches hold their priority-and-fairness seat while they initialize', { timeout: 120_000 }, () => {
  let dir: string;
  let s: TestServer;
  let echo: EchoBackend;
  const auth = { authorization: 'Bearer carol-token' };
  const carol = (method: string, path: string, body?: unknown) => s.anonymous.request(method, path, body, auth);

  /** A watch as carol, cut by the returned abort; `headers` resolves with the status when the answer's headers come. */
  function openWatch(path: string): { headers: Promise<number>; abort(): void } {
    const ac = new AbortController();
    const headers = new Promise<number>((resolve, reject) => {
      const req = httpsRequest(new URL(path, s.url), { method: 'GET', agent: false, ca: (s.anonymous.agent.options as { ca?: string }).ca, headers: auth, signal: ac.signal }, (res) => {
        res.on('data', () => undefined);
        res.on('error', () => undefined);
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (err) => (ac.signal.aborted ? resolve(0) : reject(err)));
      req.end();
    });
    return { headers, abort: () => ac.abort() };
  }

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
      flags: ['--token-auth-file', join(dir, 'tokens.csv'), '--authorization-mode=AlwaysAllow', '--max-requests-inflight=2', '--max-mutating-requests-inflight=2'],
      // A sendInitialEvents watch at a future resourceVersion waits this long for the store to get there.
      hooks: { tooLargeWaitMs: 60_000 },
    });
    const pem = servingPki(dir, 'echo');
    echo = await startEcho(pem, await readFile(join(s.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8'));
    await register(s.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: pem.ca });
    await waitAvailable(s.admin, 'v1.echo.gatehouse.dev', 'True');
    // One seat of four, never more (no borrowing), never queued: a held seat shows as a 429.
    const pl = await s.admin.request('POST', `${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 't-one' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
    });
    assert.equal(pl.status, 201, pl.text);
    const fs = await s.admin.request('POST', `${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name: 't-one' },
      spec: {
        priorityLevelConfiguration: { name: 't-one' }, matchingPrecedence: 400,
        rules: [{ subjects: [{ kind: 'User', user: { name: 'carol' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }],
      },
    });
    assert.equal(fs.status, 201, fs.text);
    const uid = (pl.json as { metadata: { uid: string } }).metadata.uid;
    for (let i = 0; i < 50; i++) {
      if ((await carol('GET', `${ECHOES}/ready`)).headers[PL_UID] === uid) break;
      await sleep(100);
    }
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
    const w = openWatch(`${CMS}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=${future}`);
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

  it('a proxied watch holds the seat until the backend\'s response headers arrive, then frees it', async () => {
    const hung = openWatch(`${ECHOES}/hang?watch=1`);
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

    const streaming = openWatch(`${ECHOES}/stream?watch=1`);
    assert.equal(await streaming.headers, 200);
    const served = await carol('GET', `${ECHOES}/while-streaming`);
    assert.equal(served.status, 200, 'the open proxied watch holds no seat once its headers came');
    streaming.abort();
  });
});
