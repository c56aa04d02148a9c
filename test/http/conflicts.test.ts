// Conflict storms: many writers on one object through update, patch, apply
// and delete. Every write is applied once or refused with 409 after the one
// retry limit (CONFLICT_ATTEMPTS). The core backend is served over loopback
// HTTP on a memory store whose reads hand over the event loop before they
// answer, so concurrent writers read the same revision and race for real.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { parseRequestInfo } from '../../lib/api/requestinfo.js';
import { STALE_OBJECT, toStatusError } from '../../lib/api/status.js';
import { newExchange } from '../../lib/http/exchange.js';
import { closeServer } from '../helpers/closeserver.js';
import { sendError } from '../../lib/http/respond.js';
import { builtinRegistry } from '../../lib/registry/index.js';
import { LiveRegistry } from '../../lib/registry/live.js';
import { CoreBackend } from '../../backends/core/backend.js';
import { openStore } from '../../backends/core/store/index.js';
import { CONFLICT_ATTEMPTS, StoreError, type ListOptions, type Store, type WatchSink } from '../../backends/core/store/types.js';

/**
 * Delegates to a memory store; counts write tries by writer; can refuse every
 * write as a conflict. In rounds (`rounds(n)`), an update waits until every
 * writer still trying has sent its own, so each round has exactly one winner
 * and everyone else conflicts: a storm that does not depend on scheduling.
 */
class StormStore implements Store {
  /** Write tries (update or delete) by the writer label of the object written, '' for deletes. */
  readonly tries = new Map<string, number>();
  /** Writes the inner store accepted, by writer. */
  readonly applied = new Map<string, number>();
  refuseAll = false;
  private live = 0;
  private waiting: Array<() => void> = [];
  constructor(private readonly inner: Store) {}

  private count(writer: string): void {
    this.tries.set(writer, (this.tries.get(writer) ?? 0) + 1);
    if (this.refuseAll) throw new StoreError('conflict', 'refused by the test');
  }
  private done(writer: string): void {
    this.applied.set(writer, (this.applied.get(writer) ?? 0) + 1);
  }
  reset(): void {
    this.tries.clear();
    this.applied.clear();
    this.refuseAll = false;
    this.live = 0;
  }
  rounds(writers: number): void {
    this.live = writers;
  }

  private release(): void {
    if (this.live === 0 || this.waiting.length < this.live) return;
    const go = this.waiting;
    this.waiting = [];
    for (const f of go) f();
  }

  async get(key: string, minRev?: number): Promise<KObject | undefined> {
    const obj = await this.inner.get(key, minRev);
    await new Promise((r) => setImmediate(r));
    return obj;
  }
  async update(key: string, obj: KObject, expectedRev?: number): Promise<KObject> {
    const writer = obj.metadata.labels?.['writer'] ?? '';
    this.count(writer);
    if (this.live > 0) {
      await new Promise<void>((go) => {
        this.waiting.push(go);
        this.release();
      });
    }
    let out: KObject;
    try {
      out = await this.inner.update(key, obj, expectedRev);
    } catch (err) {
      // A writer out of tries leaves the rounds.
      if (this.live > 0 && this.tries.get(writer) === CONFLICT_ATTEMPTS) {
        this.live--;
        this.release();
      }
      throw err;
    }
    this.done(writer);
    if (this.live > 0) {
      this.live--;
      this.release();
    }
    return out;
  }
  async delete(key: string, expectedRev?: number): Promise<KObject> {
    this.count('');
    const out = await this.inner.delete(key, expectedRev);
    this.done('');
    return out;
  }
  create(key: string, obj: KObject) {
    return this.inner.create(key, obj);
  }
  deleteCorrupt(key: string) {
    return this.inner.deleteCorrupt(key);
  }
  list(prefix: string, opts?: ListOptions) {
    return this.inner.list(prefix, opts);
  }
  watch(prefix: string, fromRev: number, sink: WatchSink) {
    return this.inner.watch(prefix, fromRev, sink);
  }
  currentRev() {
    return this.inner.currentRev();
  }
  waitForRev(rev: number, timeoutMs: number) {
    return this.inner.waitForRev(rev, timeoutMs);
  }
  check() {
    return this.inner.check();
  }
  close() {
    return this.inner.close();
  }
}

let store: StormStore;
let server: Server;
let base: string;
const WRITERS = 2 * CONFLICT_ATTEMPTS;
const NS = '/api/v1/namespaces/storm';
const CM = `${NS}/configmaps/c`;

before(async () => {
  store = new StormStore(await openStore({ backend: 'memory', historyWindowMs: 60_000 }));
  const backend = new CoreBackend({
    store,
    live: new LiveRegistry(builtinRegistry()),
    registry: builtinRegistry(),
    clock: Date.now,
    log: () => undefined,
    tooLargeWaitMs: 1000,
    bookmarkIntervalMs: 60_000,
    minRequestTimeoutS: 1800,
    bodyLimit: 3 * 1024 * 1024,
    watches: new Set(),
  });
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://storm');
    const info = parseRequestInfo(req.method ?? 'GET', url.pathname, false);
    const x = newExchange(req, res);
    backend
      .serve({ ...x, query: url.searchParams, info, user: { username: 'admin', groups: ['system:masters'] }, trace: undefined })
      .catch((err: unknown) => sendError(x, toStatusError(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  assert.equal((await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'storm' } })).status, 201);
});
after(async () => {
  await closeServer(server);
  await store.close();
});

async function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; json: Record<string, any> }> {
  const r = await fetch(`${base}${path}`, { method, ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': contentType } } : {}) });
  return { status: r.status, json: (await r.json()) as Record<string, any> };
}

beforeEach(async () => {
  store.reset();
  await call('DELETE', CM);
  const r = await call('POST', `${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { start: '1' } });
  assert.equal(r.status, 201);
  store.reset();
});

/** Sends one write per writer at once; checks every answer is 200 (applied once) or 409 (tried CONFLICT_ATTEMPTS times, applied never). */
async function storm(write: (writer: string) => Promise<{ status: number; json: Record<string, any> }>): Promise<string[]> {
  const writers = Array.from({ length: WRITERS }, (_, i) => `w${i}`);
  store.rounds(WRITERS);
  const answers = await Promise.all(writers.map(write));
  const ok: string[] = [];
  answers.forEach((a, i) => {
    const w = writers[i]!;
    if (a.status === 409) {
      assert.equal(a.json['reason'], 'Conflict');
      assert.match(a.json['message'], new RegExp(STALE_OBJECT.replace(/[;]/g, '.')));
      assert.equal(store.tries.get(w), CONFLICT_ATTEMPTS, `${w} refused after ${store.tries.get(w)} tries`);
      assert.equal(store.applied.get(w), undefined, `${w} refused but applied`);
    } else {
      assert.equal(a.status, 200, JSON.stringify(a.json));
      assert.equal(a.json['metadata']['labels']['writer'], w);
      assert.equal(store.applied.get(w), 1, `${w} applied ${store.applied.get(w)} times`);
      assert.ok(store.tries.get(w)! <= CONFLICT_ATTEMPTS);
      ok.push(w);
    }
  });
  // One winner a round, CONFLICT_ATTEMPTS rounds: the rest were refused.
  assert.equal(ok.length, CONFLICT_ATTEMPTS);
  return ok;
}

const labelled = (w: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { writer: w } }, data });

describe('a conflict storm on one object', () => {
  it('through update (PUT without resourceVersion): each write applied once or refused with 409', async () => {
    const ok = await storm((w) => call('PUT', CM, labelled(w, { by: w })));
    const final = (await call('GET', CM)).json;
    assert.ok(ok.includes(final['metadata']['labels']['writer']));
  });

  it('through a merge patch: each write applied once or refused with 409, and the object holds exactly the applied ones', async () => {
    const ok = await storm((w) => call('PATCH', CM, { metadata: { labels: { writer: w } }, data: { [w]: '1' } }, 'application/merge-patch+json'));
    const final = (await call('GET', CM)).json;
    assert.deepEqual(
      Object.keys(final['data'])
        .filter((k) => k !== 'start')
        .sort(),
      [...ok].sort(),
    );
  });

  it('through server-side apply (one manager per writer, forced): each write applied once or refused with 409', async () => {
    const ok = await storm((w) => call('PATCH', `${CM}?fieldManager=m-${w}&force=true`, labelled(w, { [w]: '1' }), 'application/apply-patch+yaml'));
    const final = (await call('GET', CM)).json;
    assert.deepEqual(
      Object.keys(final['data'])
        .filter((k) => k !== 'start')
        .sort(),
      [...ok].sort(),
    );
  });

  it('through delete of an object with a finalizer: the deletion is applied once, every delete answers the pending object', async () => {
    const cur = (await call('GET', CM)).json;
    assert.equal((await call('PUT', CM, { ...cur, metadata: { ...cur['metadata'], finalizers: ['example.com/hold'] } })).status, 200);
    store.reset();
    const answers = await Promise.all(Array.from({ length: WRITERS }, () => call('DELETE', CM)));
    for (const a of answers) {
      assert.equal(a.status, 200, JSON.stringify(a.json));
      assert.ok(a.json['metadata']['deletionTimestamp']);
    }
    assert.equal(store.applied.get(''), 1);
    assert.equal(new Set(answers.map((a) => a.json['metadata']['resourceVersion'])).size, 1);
    const held = (await call('GET', CM)).json;
    assert.equal((await call('PUT', CM, { ...held, metadata: { ...held['metadata'], finalizers: [] } })).status, 200);
  });
});

describe('a write that conflicts every time', () => {
  const refused = async (send: () => Promise<{ status: number; json: Record<string, any> }>, writer: string) => {
    store.refuseAll = true;
    const r = await send();
    store.refuseAll = false;
    assert.equal(r.status, 409, JSON.stringify(r.json));
    assert.equal(r.json['message'], `Operation cannot be fulfilled on configmaps "c": ${STALE_OBJECT}`);
    assert.equal(store.tries.get(writer), CONFLICT_ATTEMPTS);
  };
  it('is refused with 409 after CONFLICT_ATTEMPTS tries through update', () => refused(() => call('PUT', CM, labelled('u', {})), 'u'));
  it('is refused with 409 after CONFLICT_ATTEMPTS tries through patch', () =>
    refused(() => call('PATCH', CM, { metadata: { labels: { writer: 'p' } } }, 'application/merge-patch+json'), 'p'));
  it('is refused with 409 after CONFLICT_ATTEMPTS tries through apply', () =>
    refused(() => call('PATCH', `${CM}?fieldManager=m`, labelled('a', {}), 'application/apply-patch+yaml'), 'a'));
  it('is refused with 409 after CONFLICT_ATTEMPTS tries through delete', () => refused(() => call('DELETE', CM), ''));
});
