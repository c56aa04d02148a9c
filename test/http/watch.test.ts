// Watch over HTTP: event types, start versions, bookmarks, streaming
// lists, selectors, timeouts, resume, 410 after the history window, the
// chunked wire format and Table events.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { HttpsClient, Reply, WatchStream } from '../helpers/client.js';
import { FrameReader } from './protobuf-k8s.js';

let s: TestServer;
let c: HttpsClient;
before(async () => {
  s = await startTestServer({ hooks: { bookmarkIntervalMs: 200 } });
  c = s.admin;
});
after(async () => {
  await s.close();
});

const cm = (name: string, labels?: Record<string, string>, data?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  ...(data ? { data } : {}),
});
const q = (path: string, params: Record<string, string | undefined>) =>
  `${path}?${new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString()}`;

async function ns(name: string): Promise<string> {
  const r = await c.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(r.status, 201, r.text);
  return `/api/v1/namespaces/${name}/configmaps`;
}

async function create(path: string, name: string, labels?: Record<string, string>): Promise<Reply> {
  const r = await c.request('POST', path, cm(name, labels));
  assert.equal(r.status, 201, r.text);
  return r;
}

async function withWatch(client: HttpsClient, path: string, fn: (w: WatchStream) => Promise<void>, headers = {}): Promise<void> {
  const w = await client.watch(path, headers);
  try {
    await fn(w);
  } finally {
    w.stop();
  }
}

/** Next event that is not a BOOKMARK. */
async function nextChange(w: WatchStream) {
  for (;;) {
    const ev = await w.next();
    if (!ev) throw new Error('watch ended or timed out');
    if (ev.type !== 'BOOKMARK') return ev;
  }
}

describe('watch basics', () => {
  it('sends ADDED, MODIFIED and DELETED on a collection', async () => {
    const P = await ns('w-basic');
    const rv = (await c.request('GET', P)).json.metadata.resourceVersion;
    await withWatch(c, q(P, { watch: '1', resourceVersion: rv }), async (w) => {
      assert.equal(w.status, 200);
      const a = await create(P, 'x');
      await c.request('PUT', `${P}/x`, { ...a.json, data: { k: 'v' } });
      await c.request('DELETE', `${P}/x`);
      const evs = await w.take(3);
      assert.deepEqual(
        evs.map((e) => e.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      assert.equal(evs[0]!.object.kind, 'ConfigMap');
      assert.deepEqual(evs[1]!.object.data, { k: 'v' });
      assert.equal(evs[2]!.object.metadata.name, 'x');
      assert.ok(Number(evs[2]!.object.metadata.resourceVersion) > Number(evs[1]!.object.metadata.resourceVersion));
    });
  });

  it('watches a single object by path', async () => {
    const P = await ns('w-single');
    await create(P, 'one');
    await create(P, 'two');
    await withWatch(c, `${P}/one?watch=true`, async (w) => {
      const first = await w.next();
      assert.equal(first?.type, 'ADDED');
      assert.equal(first?.object.metadata.name, 'one');
      const two = (await c.request('GET', `${P}/two`)).json;
      await c.request('PUT', `${P}/two`, { ...two, data: { a: '1' } });
      const one = (await c.request('GET', `${P}/one`)).json;
      await c.request('PUT', `${P}/one`, { ...one, data: { a: '2' } });
      const ev = await w.next();
      assert.equal(ev?.type, 'MODIFIED');
      assert.equal(ev?.object.metadata.name, 'one');
    });
  });

  it('starts with ADDED for existing objects when resourceVersion is unset or 0', async () => {
    const P = await ns('w-initial');
    await create(P, 'a');
    await create(P, 'b');
    for (const params of [{ watch: '1' }, { watch: '1', resourceVersion: '0' }]) {
      await withWatch(c, q(P, params), async (w) => {
        const init = await w.take(2);
        assert.deepEqual(
          init.map((e) => e.type),
          ['ADDED', 'ADDED'],
        );
        assert.deepEqual(init.map((e) => e.object.metadata.name).sort(), ['a', 'b']);
      });
    }
    await withWatch(c, q(P, { watch: '1' }), async (w) => {
      await w.take(2);
      await create(P, 'c');
      const ev = await w.next();
      assert.equal(ev?.type, 'ADDED');
      assert.equal(ev?.object.metadata.name, 'c');
    });
  });

  it('sends only later changes from a given resourceVersion', async () => {
    const P = await ns('w-from');
    await create(P, 'before');
    const rv = (await create(P, 'middle')).json.metadata.resourceVersion;
    await create(P, 'after');
    await withWatch(c, q(P, { watch: '1', resourceVersion: rv }), async (w) => {
      const ev = await w.next();
      assert.equal(ev?.type, 'ADDED');
      assert.equal(ev?.object.metadata.name, 'after');
      assert.equal(await w.next(300), undefined);
    });
  });

  it('ends the stream after timeoutSeconds', async () => {
    const P = await ns('w-timeout');
    const w = await c.watch(q(P, { watch: '1', timeoutSeconds: '1' }));
    try {
      assert.equal(await w.waitEnd(5000), true);
    } finally {
      w.stop();
    }
  });

  it('resumes from the last seen resourceVersion with exactly the missed events', async () => {
    const P = await ns('w-resume');
    const rv0 = (await c.request('GET', P)).json.metadata.resourceVersion;
    let last = '';
    await withWatch(c, q(P, { watch: '1', resourceVersion: rv0 }), async (w) => {
      await create(P, 'r1');
      const ev = await w.next();
      assert.equal(ev?.object.metadata.name, 'r1');
      last = ev!.object.metadata.resourceVersion;
    });
    await create(P, 'r2');
    await c.request('DELETE', `${P}/r1`);
    await withWatch(c, q(P, { watch: '1', resourceVersion: last }), async (w) => {
      const evs = await w.take(2);
      assert.deepEqual(
        evs.map((e) => `${e.type} ${e.object.metadata.name}`),
        ['ADDED r2', 'DELETED r1'],
      );
      assert.equal(await w.next(300), undefined);
    });
  });

  it('is a chunked stream of one JSON document per line', async () => {
    const P = await ns('w-wire');
    await create(P, 'a');
    await create(P, 'b');
    const agent = c.agent;
    const raw = await new Promise<{ headers: Record<string, unknown>; text: string }>((resolve, reject) => {
      const req = httpsRequest(new URL(q(P, { watch: '1', timeoutSeconds: '1' }), c.base), { agent, method: 'GET' }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ headers: res.headers, text }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(raw.headers['transfer-encoding'], 'chunked');
    assert.match(String(raw.headers['content-type']), /^application\/json/);
    const lines = raw.text.split('\n').filter(Boolean);
    assert.equal(lines.length, 2);
    for (const l of lines) {
      const ev = JSON.parse(l);
      assert.equal(ev.type, 'ADDED');
      assert.ok(!l.includes('\n'));
    }
  });
});

describe('bookmarks and streaming lists', () => {
  it('sends BOOKMARK events carrying only a resourceVersion when asked', async () => {
    const P = await ns('w-bm');
    const rv = (await create(P, 'a')).json.metadata.resourceVersion;
    await withWatch(c, q(P, { watch: '1', resourceVersion: rv, allowWatchBookmarks: 'true' }), async (w) => {
      const ev = await w.next(5000);
      assert.equal(ev?.type, 'BOOKMARK');
      assert.equal(ev?.object.kind, 'ConfigMap');
      assert.ok(Number(ev?.object.metadata.resourceVersion) >= Number(rv));
      assert.deepEqual(Object.keys(ev!.object.metadata), ['resourceVersion']);
    });
  });

  it('sends no BOOKMARK events unless asked', async () => {
    const P = await ns('w-nobm');
    const rv = (await create(P, 'a')).json.metadata.resourceVersion;
    await withWatch(c, q(P, { watch: '1', resourceVersion: rv }), async (w) => {
      assert.equal(await w.next(700), undefined);
    });
  });

  it('streams the initial state then a BOOKMARK marked initial-events-end', async () => {
    const P = await ns('w-stream');
    await create(P, 'a');
    await create(P, 'b');
    await withWatch(
      c,
      q(P, { watch: '1', sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true', resourceVersion: '' }),
      async (w) => {
        const evs = await w.take(3);
        assert.deepEqual(
          evs.map((e) => e.type),
          ['ADDED', 'ADDED', 'BOOKMARK'],
        );
        assert.equal(evs[2]!.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
        await create(P, 'c');
        const ev = await nextChange(w);
        assert.equal(ev.type, 'ADDED');
        assert.equal(ev.object.metadata.name, 'c');
      },
    );
  });

  it('sends an initial state larger than the slow-client limit whole, then its bookmark', async () => {
    // 20 ConfigMaps of 900 KB: 18 MB of initial events, more than a watcher may leave unsent (16 MiB). Written
    // in one burst, the stream was cut as a slow client before the last ones; written as the client reads, all arrive.
    const P = await ns('w-large-initial');
    const big = 'x'.repeat(900 * 1024);
    const names = Array.from({ length: 20 }, (_, i) => `big-${String(i).padStart(2, '0')}`);
    for (const name of names) {
      const r = await c.request('POST', P, cm(name, undefined, { big }));
      assert.equal(r.status, 201, r.text.slice(0, 200));
    }
    await withWatch(
      c,
      q(P, { watch: '1', sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true', resourceVersion: '0' }),
      async (w) => {
        const evs = await w.take(names.length + 1, 60_000);
        const added = evs.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name as string);
        assert.deepEqual(added, names);
        assert.deepEqual(new Set(evs.slice(0, -1).map((e) => e.type)), new Set(['ADDED']));
        const last = evs.at(-1)!;
        assert.equal(last.type, 'BOOKMARK');
        assert.equal(last.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
        assert.equal(evs.filter((e) => e.object.data?.big === big).length, names.length);
      },
    );
  });

  it('rejects invalid watch option combinations with 422', async () => {
    const P = await ns('w-invalid');
    for (const params of [
      { sendInitialEvents: 'true', allowWatchBookmarks: 'true' },
      { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' },
      { sendInitialEvents: 'true', resourceVersionMatch: 'Exact', resourceVersion: '1', allowWatchBookmarks: 'true' },
      { resourceVersionMatch: 'NotOlderThan', resourceVersion: '1' },
    ]) {
      const r = await c.request('GET', q(P, { watch: '1', ...params }));
      assert.equal(r.status, 422, JSON.stringify(params));
      assert.equal(r.json.reason, 'Invalid');
      assert.equal(r.json.details.kind, 'ListOptions');
      assert.equal(r.json.details.group, 'meta.k8s.io');
    }
  });
});

describe('selectors on watch', () => {
  it('turns leaving the selector into DELETED and entering into ADDED', async () => {
    const P = await ns('w-sel');
    const a = await create(P, 'a', { app: 'x' });
    const b = await create(P, 'b', { app: 'y' });
    const rv = b.json.metadata.resourceVersion;
    await withWatch(c, q(P, { watch: '1', resourceVersion: rv, labelSelector: 'app=x' }), async (w) => {
      const left = await c.request('PUT', `${P}/a`, { ...a.json, metadata: { ...a.json.metadata, labels: { app: 'z' } } });
      assert.equal(left.status, 200);
      const ev1 = await w.next();
      assert.equal(ev1?.type, 'DELETED');
      assert.equal(ev1?.object.metadata.name, 'a');
      assert.equal(ev1?.object.metadata.resourceVersion, left.json.metadata.resourceVersion);
      await c.request('PUT', `${P}/b`, { ...b.json, metadata: { ...b.json.metadata, labels: { app: 'x' } } });
      const ev2 = await w.next();
      assert.equal(ev2?.type, 'ADDED');
      assert.equal(ev2?.object.metadata.name, 'b');
      await create(P, 'c', { app: 'q' });
      assert.equal(await w.next(300), undefined);
    });
  });
});

describe('Table watch', () => {
  it('sends Table objects with rows', async () => {
    const P = await ns('w-table');
    await create(P, 'a');
    await withWatch(
      c,
      q(P, { watch: '1' }),
      async (w) => {
        const ev = await w.next();
        assert.equal(ev?.type, 'ADDED');
        assert.equal(ev?.object.kind, 'Table');
        assert.equal(ev?.object.apiVersion, 'meta.k8s.io/v1');
        assert.equal(ev?.object.rows.length, 1);
        assert.equal(ev?.object.rows[0].cells[0], 'a');
        assert.equal(ev?.object.rows[0].object.kind, 'PartialObjectMetadata');
      },
      { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    );
  });
});

describe('history window', () => {
  let x: TestServer;
  let offset = 0;
  before(async () => {
    x = await startTestServer({ flags: ['--watch-history=2s'], hooks: { clock: () => Date.now() + offset } });
  });
  after(async () => {
    await x.close();
  });

  it('ends a watch from a version older than the history with an ERROR event holding a 410 Expired Status', async () => {
    const P = '/api/v1/namespaces/default/configmaps';
    const old = (await x.admin.request('POST', P, cm('h1'))).json.metadata.resourceVersion;
    await x.admin.request('POST', P, cm('h2'));
    offset += 3000;
    await x.admin.request('POST', P, cm('h3'));
    const w = await x.admin.watch(q(P, { watch: '1', resourceVersion: old }));
    try {
      const ev = await w.next();
      assert.equal(ev?.type, 'ERROR');
      assert.equal(ev?.object.kind, 'Status');
      assert.equal(ev?.object.code, 410);
      assert.equal(ev?.object.reason, 'Expired');
      assert.equal(await w.waitEnd(), true);
    } finally {
      w.stop();
    }
  });

  it('in protobuf, the ERROR is a WatchEvent frame holding the 410 Status', async () => {
    const P = '/api/v1/namespaces/default/configmaps';
    const old = (await x.admin.request('POST', P, cm('p1'))).json.metadata.resourceVersion;
    await x.admin.request('POST', P, cm('p1b'));
    offset += 3000;
    await x.admin.request('POST', P, cm('p2'));
    const body = await new Promise<Buffer>((resolve, reject) => {
      const req = httpsRequest(
        new URL(q(P, { watch: 'true', resourceVersion: old, timeoutSeconds: '3' }), x.url),
        { agent: x.admin.agent, headers: { accept: 'application/vnd.kubernetes.protobuf' } },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve(Buffer.concat(parts)));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    const reader = new FrameReader();
    reader.push(body);
    assert.equal(reader.pending, 0);
    assert.equal(reader.events.length, 1);
    assert.deepEqual(
      [reader.events[0]!.type, reader.events[0]!.kind, reader.events[0]!.object.code, reader.events[0]!.object.reason],
      ['ERROR', 'Status', 410, 'Expired'],
    );
  });
});
