// Redis going away under a running `gatehouse serve`: readiness fails on the
// store check, requests fail fast with 503 + Retry-After, open watches end,
// and service resumes by itself when Redis is back.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { RedisServer, redisServerSkipReason } from './redis-server.js';
import { eventually } from '../helpers/eventually.js';

const skip = await redisServerSkipReason();
const CM = '/api/v1/namespaces/default/configmaps';

/** The bound of every wait here: Redis restarts and reconnections. */
const WAIT = { timeoutMs: 15_000, intervalMs: 100 };

describe('redis faults under a running server', { skip }, () => {
  let redis: RedisServer;
  let gh: Gatehouse;

  before(async () => {
    redis = await RedisServer.start(['--appendonly', 'yes']);
    gh = await startGatehouse({ flags: ['--storage-backend=redis', `--redis-url=${redis.url}`, '--storage-prefix=faults'] });
  });
  after(async () => {
    if (process.env.DEBUG_GH) console.log(gh?.proc.stdout, gh?.proc.stderr);
    await stopAll();
    await redis.destroy();
  });

  it('fails readiness and requests fast while redis is down, ends watches, and resumes when it returns', async () => {
    const created = await gh.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' }, data: { a: '1' } });
    assert.equal(created.status, 201, created.text);
    const watch = await gh.admin.watch(`${CM}?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`);

    await redis.stop('SIGTERM');

    const ready = await eventually(
      'readyz to fail',
      async () => {
        const r = await gh.admin.request('GET', '/readyz?verbose');
        return r.status === 200 ? undefined : r;
      },
      WAIT,
    );
    assert.equal(ready.status, 500);
    assert.match(ready.text, /\[-\]etcd failed/);

    const get = await gh.admin.request('GET', `${CM}/before`);
    assert.equal(get.status, 503, get.text);
    assert.equal(get.json.reason, 'ServiceUnavailable');
    assert.ok(Number(get.headers['retry-after']) >= 1);
    // A cluster-scoped create (a namespaced one is the todo test below).
    const post = await gh.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'during' } });
    assert.equal(post.status, 503, post.text);
    assert.ok(post.headers['retry-after']);
    const list = await gh.admin.request('GET', CM);
    assert.equal(list.status, 503);

    // The open watch ends: an ERROR event, or a clean close.
    const ev = await watch.next(15_000);
    if (ev) assert.equal(ev.type, 'ERROR', JSON.stringify(ev));
    else assert.ok(watch.ended, 'the watch stream closed');
    watch.stop();

    await redis.restart();
    await eventually('readyz to pass again', async () => ((await gh.admin.request('GET', '/readyz')).status === 200 ? true : undefined), WAIT);
    const again = await gh.admin.request('GET', `${CM}/before`);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.json.data, { a: '1' });
    const after = await gh.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } });
    assert.equal(after.status, 201, after.text);
    const w2 = await gh.admin.watch(`${CM}?watch=1&resourceVersion=${after.json.metadata.resourceVersion}`);
    try {
      await gh.admin.request('DELETE', `${CM}/after`);
      const [del] = await w2.take(1, 10_000);
      assert.equal(del!.type, 'DELETED');
    } finally {
      w2.stop();
    }
  });

  it('fails a namespaced create with 503 while redis is down', async () => {
    await redis.stop('SIGTERM');
    try {
      await eventually('readyz to fail', async () => ((await gh.admin.request('GET', '/readyz')).status === 200 ? undefined : true), WAIT);
      const post = await gh.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'during' } });
      assert.equal(post.status, 503, post.text);
    } finally {
      await redis.restart();
      await eventually('readyz to pass again', async () => ((await gh.admin.request('GET', '/readyz')).status === 200 ? true : undefined), WAIT);
    }
  });

  it('answers 504 at the deadline while redis stalls, never a false 404 or 409, and serves again after', async () => {
    const made = await gh.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stall' }, data: { a: '1' } });
    assert.equal(made.status, 201, made.text);
    // Redis answers nothing until the test lets it go on (SIGSTOP to this test's own redis-server, seen stopped):
    // every command waits, none fails, with no guess of when a stall has begun or how long it lasts.
    const pid = redis.pid!;
    process.kill(pid, 'SIGSTOP');
    // A limit, not a timing assertion: a server that never gives up is answered once Redis goes on, and fails below.
    const limit = setTimeout(() => process.kill(pid, 'SIGCONT'), 60_000);
    try {
      await eventually('redis-server stopped', () => stopped(pid), { intervalMs: 5 });
      const [get, post] = await Promise.all([
        gh.admin.request('GET', `${CM}/stall?timeout=1s`),
        gh.admin.request('POST', `${CM}?timeout=1s`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stall' } }),
      ]);
      for (const r of [get, post]) {
        assert.equal(r.status, 504, r.text);
        assert.equal(r.json.reason, 'Timeout');
      }
    } finally {
      clearTimeout(limit);
      process.kill(pid, 'SIGCONT');
    }
    await eventually('readyz to pass again', async () => ((await gh.admin.request('GET', '/readyz')).status === 200 ? true : undefined), WAIT);
    const again = await gh.admin.request('GET', `${CM}/stall`);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.json.data, { a: '1' });
  });

  it('answers gone to old revisions after redis lost its data, and serves the new state', async () => {
    const made = await gh.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'lost' } });
    assert.equal(made.status, 201, made.text);
    const oldRv = made.json.metadata.resourceVersion as string;
    // Lose everything: kill Redis and delete its persistence files before it restarts.
    await redis.stop('SIGKILL');
    for (const f of readdirSync(redis.dir)) rmSync(`${redis.dir}/${f}`, { recursive: true, force: true });
    await redis.restart();
    await eventually('readyz to pass again', async () => ((await gh.admin.request('GET', '/readyz')).status === 200 ? true : undefined), WAIT);
    const gone = await eventually(
      'the lost object to disappear',
      async () => {
        const r = await gh.admin.request('GET', `${CM}/lost`);
        return r.status === 404 ? r : undefined;
      },
      WAIT,
    );
    assert.equal(gone.status, 404);
    const w = await gh.admin.watch(`${CM}?watch=1&resourceVersion=${oldRv}`);
    try {
      const ev = await w.next(10_000);
      assert.equal(ev?.type, 'ERROR');
      assert.equal(ev?.object.code, 410);
    } finally {
      w.stop();
    }
  });
});

/** Whether a process is stopped (state T in /proc); true where there is no /proc (SIGSTOP taken as delivered). */
function stopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] === 'T';
  } catch {
    return true;
  }
}
