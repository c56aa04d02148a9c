import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, readFile, writeFile, appendFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../backends/core/store/file.js';
import type { FileStoreOptions } from '../../backends/core/store/file.js';
import { StoreError } from '../../backends/core/store/types.js';
import { storeContract } from './contract.js';
import { pod, rv } from './helpers.js';
import { goJson, jsonAnswerText, listItemBytes } from '../../lib/api/json.js';

storeContract('file', async (opts) => {
  const dir = await mkdtemp(join(tmpdir(), 'gh-store-'));
  const store = await FileStore.open({ ...opts, dir: join(dir, 'store') });
  return { store, cleanup: () => rm(dir, { recursive: true, force: true }) };
});

describe('file store on disk', () => {
  let dir: string;
  const open = (extra: Partial<FileStoreOptions> = {}): Promise<FileStore> => FileStore.open({ dir, historyWindowMs: 60_000, tooLargeWaitMs: 100, ...extra });

  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'gh-store-')), 'store');
  });
  afterEach(async () => {
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  async function fill(store: FileStore, n: number): Promise<void> {
    for (let i = 0; i < n; i++) await store.create(`core/pods/a/p${i}`, pod('a', `p${i}`, { spec: { n: i } }));
  }

  it('keeps every object and the revision counter across close and reopen', async () => {
    let store = await open();
    await fill(store, 5);
    await store.update('core/pods/a/p1', pod('a', 'p1', { spec: { n: 100 } }));
    const last = await store.delete('core/pods/a/p4');
    const before = await store.list('core/pods/');
    await store.close();
    store = await open();
    assert.equal(await store.currentRev(), rv(last));
    assert.deepEqual(await store.list('core/pods/'), before);
    const next = await store.create('core/pods/a/p9', pod('a', 'p9'));
    assert.equal(rv(next), rv(last) + 1);
    await store.close();
  });

  it('replays the log into watch history after a reopen', async () => {
    let store = await open();
    await fill(store, 3);
    await store.close();
    store = await open();
    const seen: string[] = [];
    const w = store.watch('core/pods/', 1, { event: (e) => seen.push(e.key), error: (e) => assert.fail(e.message) });
    await new Promise((r) => setTimeout(r, 5));
    w.stop();
    assert.deepEqual(seen, ['core/pods/a/p1', 'core/pods/a/p2']);
    await store.close();
  });

  it('ignores a torn record at the tail of the log and keeps working', async () => {
    let store = await open();
    await fill(store, 3);
    await store.close();
    const logPath = join(dir, 'log');
    const size = (await stat(logPath)).size;
    await appendFile(logPath, '0badc0de {"r":4,"b":' + size + ',"t":1,"k":"core/pods/a/torn","o":{"metad');
    store = await open();
    assert.equal(await store.currentRev(), 3);
    assert.equal(await store.get('core/pods/a/torn'), undefined);
    assert.equal((await stat(logPath)).size, size, 'the torn tail is truncated');
    await store.create('core/pods/a/after', pod('a', 'after'));
    await store.close();
    store = await open();
    assert.equal(rv(await store.get('core/pods/a/after')), 4);
    await store.close();
  });

  it('ignores a damaged last batch even when it ends with a newline', async () => {
    let store = await open();
    await fill(store, 2);
    await store.close();
    const logPath = join(dir, 'log');
    await appendFile(logPath, Buffer.alloc(300, 0));
    await appendFile(logPath, '\n');
    store = await open();
    assert.equal(await store.currentRev(), 2);
    await store.close();
  });

  it('refuses to open a log with a damaged record in the middle', async () => {
    let store = await open();
    await fill(store, 4);
    await store.close();
    const logPath = join(dir, 'log');
    const buf = await readFile(logPath);
    const second = buf.indexOf('\n') + 1;
    buf[second + 30] = buf[second + 30]! ^ 0x01; // flip one bit inside record 2 of 4
    await writeFile(logPath, buf);
    await assert.rejects(open(), (err: unknown) => {
      assert.ok(err instanceof StoreError && err.code === 'corrupt');
      assert.match(err.message, new RegExp(`"${logPath}" at offset ${second}`));
      return true;
    });
    // A failed open releases the directory.
    await writeFile(logPath, buf.subarray(0, second));
    store = await open();
    assert.equal(await store.currentRev(), 1);
    await store.close();
  });

  it('keeps data and revisions through compaction and reopen', async () => {
    let store = await open();
    await fill(store, 10);
    for (let i = 0; i < 10; i += 2) await store.delete(`core/pods/a/p${i}`);
    const before = await store.list('core/pods/');
    const rev = await store.currentRev();
    await store.compact();
    assert.equal((await stat(join(dir, 'log'))).size, 0);
    assert.deepEqual(await store.list('core/pods/'), before, 'visible state unchanged');
    const old = await store.list('core/pods/', { rev: 3 });
    assert.equal(old.items.length, 3, 'in-memory history survives compaction');
    await store.close();
    store = await open();
    assert.deepEqual(await store.list('core/pods/'), before);
    assert.equal(await store.currentRev(), rev);
    for (let i = 1; i < 10; i += 2) await store.delete(`core/pods/a/p${i}`);
    await store.compact();
    await store.close();
    store = await open();
    assert.equal(await store.currentRev(), rev + 5, 'an empty store keeps its revision counter');
    assert.equal(rv(await store.create('core/pods/a/z', pod('a', 'z'))), rev + 6);
    await store.close();
  });

  it("answers a reopened store's objects with the JSON they were written with: list bytes and text as serializing them gives", async () => {
    // Contents JSON.stringify and Go write differently (<, >, &, U+2028/9), escapes, non-ASCII, integer-like
    // keys (enumerated first), empty containers, numbers: the kept bytes must be goJson's in every case.
    const odd = [
      { s: 'plain' },
      { s: '<b>&</b>' },
      { s: 'line\u2028sep\u2029' },
      { s: 'quote " backslash \\ newline \n tab \t nul \u0000 é 日本 😀' },
      { m: { b: 1, 2: 'two', 1: 'one', a: [] }, e: {}, n: [0.1, -0, 1e21, 123456789012, -5.5] },
      { s: 'lone \ud800 surrogate' },
    ];
    let store = await open();
    for (let i = 0; i < odd.length; i++) await store.create(`core/pods/a/s${i}`, pod('a', `s${i}`, { spec: odd[i] }));
    await store.compact(); // these now come from the snapshot…
    for (let i = 0; i < odd.length; i++) await store.create(`core/pods/a/l${i}`, pod('a', `l${i}`, { spec: odd[i] })); // …these from the log
    await store.update('core/pods/a/s0', pod('a', 's0', { spec: { s: 'replaced in the log' } }));
    await store.update('core/pods/a/l0', pod('a', 'l0', { spec: { s: 'replaced twice' } }));
    await store.update('core/pods/a/l0', pod('a', 'l0', { spec: { s: 'replaced twice, last' } }));
    await store.delete('core/pods/a/l1');
    await store.close();
    store = await open();
    const { items } = await store.list('core/pods/');
    assert.equal(items.length, 2 * odd.length - 1);
    for (const o of items) {
      const want = goJson(o);
      assert.equal(listItemBytes(o).toString('utf8'), `${want},`, o.metadata.name);
      assert.equal(jsonAnswerText(o), `${want}\n`, o.metadata.name);
    }
    assert.equal(goJson(items.find((o) => o.metadata.name === 'l0')).includes('replaced twice, last'), true);
    await store.close();
  });

  it('answers objects reopened from a log of live records only (their bytes viewed in the loaded file) as serializing them gives', async () => {
    let store = await open();
    const big = 'x'.repeat(2000);
    for (let i = 0; i < 20; i++) await store.create(`core/pods/a/v${i}`, pod('a', `v${i}`, { spec: { big, i, s: i === 3 ? '<&>' : 'é' } }));
    await store.close();
    store = await open();
    const { items } = await store.list('core/pods/');
    assert.equal(items.length, 20);
    for (const o of items) {
      const want = goJson(o);
      assert.equal(listItemBytes(o).toString('utf8'), `${want},`, o.metadata.name);
      assert.equal(jsonAnswerText(o), `${want}\n`, o.metadata.name);
    }
    await store.close();
  });

  it('compacts by itself when the log outgrows the live data', async () => {
    let store = await open({ compactMinBytes: 2000, compactRatio: 2 });
    await store.create('core/pods/a/x', pod('a', 'x'));
    for (let i = 0; i < 100; i++) await store.update('core/pods/a/x', pod('a', 'x', { spec: { n: i } }));
    assert.ok((await stat(join(dir, 'log'))).size < 4000);
    await stat(join(dir, 'snapshot'));
    await store.close();
    store = await open();
    assert.equal(rv(await store.get('core/pods/a/x')), 101);
    await store.close();
  });

  it('weighs the live data in log bytes, the same after a reopen: a log of live records only is never compacted', async () => {
    const exists = (f: string) =>
      stat(join(dir, f)).then(
        () => true,
        () => false,
      );
    const tight = { compactMinBytes: 1, compactRatio: 1.01 };
    let store = await open(tight);
    await fill(store, 10);
    await store.close(); // waits for the write loop, where compaction would run
    assert.equal(await exists('snapshot'), false, 'every record in the log is live');
    // Sizes rebuilt from the log's lines at open equal those the writes counted.
    store = await open(tight);
    await store.create('core/pods/a/more', pod('a', 'more'));
    await store.close();
    assert.equal(await exists('snapshot'), false, 'still only live records after a reopen');
    store = await open(tight);
    await store.update('core/pods/a/p0', pod('a', 'p0', { spec: { n: 7 } }));
    await store.close();
    assert.equal(await exists('snapshot'), true, 'a dead record tips the log over the live data');
    assert.equal((await stat(join(dir, 'log'))).size, 0);
    store = await open();
    assert.equal((await store.list('core/pods/')).items.length, 11);
    await store.close();
  });

  it('recovers when a compaction stopped after writing the snapshot', async () => {
    let store = await open();
    await fill(store, 3);
    await store.close();
    const log = await readFile(join(dir, 'log'));
    store = await open();
    await store.compact();
    await store.create('core/pods/a/late', pod('a', 'late'));
    await store.close();
    // Simulate a crash between the snapshot rename and the log truncation: the old log is back.
    await writeFile(join(dir, 'log'), log);
    await writeFile(join(dir, 'snapshot.tmp'), 'half a snapshot');
    store = await open();
    assert.equal(await store.currentRev(), 3);
    assert.equal((await store.list('core/pods/')).items.length, 3);
    await store.close();
  });

  it('refuses a second open of a directory in use', async () => {
    const store = await open();
    await assert.rejects(open(), (err: unknown) => err instanceof StoreError && err.code === 'unreachable');
    await store.close();
  });

  it('reports a write failing against one not yet durable only once that one is readable', async () => {
    const store = await open();
    const first = store.create('core/pods/a/x', pod('a', 'x'));
    const second = store.create('core/pods/a/x', pod('a', 'x')).then(
      () => assert.fail('a second create of the same key succeeded'),
      async (err: unknown) => {
        assert.ok(err instanceof StoreError && err.code === 'exists');
        assert.equal(rv(await store.get('core/pods/a/x')), 1, 'the first create is readable when the second fails');
      },
    );
    const stale = store.update('core/pods/a/x', pod('a', 'x'), 7).then(
      () => assert.fail('an update at a wrong revision succeeded'),
      (err: unknown) => assert.ok(err instanceof StoreError && err.code === 'conflict'),
    );
    assert.equal(rv(await first), 1);
    await Promise.all([second, stale]);
    await store.close();
  });

  it('commits many concurrent writes in batches and acknowledges each one', async () => {
    const store = await open();
    const n = 2000;
    const t0 = performance.now();
    const done = await Promise.all(Array.from({ length: n }, (_, i) => store.create(`core/pods/b/p${i}`, pod('b', `p${i}`))));
    const ms = performance.now() - t0;
    assert.deepEqual(new Set(done.map(rv)).size, n);
    assert.equal((await store.list('core/pods/b/')).items.length, n);
    console.log(`# file store: ${n} concurrent creates in ${ms.toFixed(0)} ms (${Math.round((n / ms) * 1000)}/s)`);
    await store.close();
  });

  it('makes concurrent writes durable with fewer syncs than writes, each acknowledged one synced', async () => {
    const store = await open();
    const n = 64;
    const before = store.syncStats();
    // Creates, an update and a delete issued together all join group-committed batches.
    const created = await Promise.all(Array.from({ length: n }, (_, i) => store.create(`core/pods/g/p${i}`, pod('g', `p${i}`))));
    const mid = store.syncStats();
    assert.equal(mid.records - before.records, n, 'every write went through a sync');
    assert.ok(mid.syncs - before.syncs >= 1 && mid.syncs - before.syncs < n, `${mid.syncs - before.syncs} syncs for ${n} concurrent writes`);
    // Writes awaited one at a time cannot share: one sync each before its acknowledgement.
    for (let i = 0; i < 5; i++) {
      const s0 = store.syncStats();
      await store.update(`core/pods/g/p${i}`, pod('g', `p${i}`, { spec: { n: i } }), rv(created[i]));
      const s1 = store.syncStats();
      assert.deepEqual([s1.syncs - s0.syncs, s1.records - s0.records], [1, 1], 'an acknowledged write was synced');
    }
    // What was acknowledged is on disk: a reopen reads it back from the log.
    const listed = await store.list('core/pods/g/');
    await store.close();
    const again = await open();
    assert.deepEqual(await again.list('core/pods/g/'), listed);
    await again.close();
  });

  it('writes the log format file-load reads (records of one batch share their batch offset)', async () => {
    const store = await open();
    await store.create('core/pods/h/first', pod('h', 'first'));
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.create(`core/pods/h/p${i}`, pod('h', `p${i}`))));
    const syncs = store.syncStats().syncs;
    await store.close();
    const lines = (await readFile(join(dir, 'log'), 'utf8')).trimEnd().split('\n');
    assert.equal(lines.length, 11);
    const recs = lines.map((l) => {
      assert.match(l, /^[0-9a-f]{8} \{/);
      return JSON.parse(l.slice(9)) as { r: number; b: number };
    });
    assert.deepEqual(
      recs.map((r) => r.r),
      Array.from({ length: 11 }, (_, i) => i + 1),
    );
    assert.equal(new Set(recs.map((r) => r.b)).size, syncs, 'one batch offset per sync');
  });
});
