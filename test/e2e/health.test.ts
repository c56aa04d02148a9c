// /livez, /readyz and /healthz of the real process: verbose listings of every
// check, exclusions, single checks, and the start flag --livez-grace-period.
// (Grace-period semantics while a post-start hook is still running are covered
// in-process; here they would need timing assertions.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGatehouse, stopAll, type Gatehouse } from './helpers.js';

after(stopAll);

function checkLines(body: string): string[] {
  return body.trim().split('\n');
}

describe('health endpoints of gatehouse serve', () => {
  let gh: Gatehouse;
  before(async () => {
    gh = await startGatehouse({ flags: ['--livez-grace-period=30s'] });
  });

  it('readyz?verbose lists ping, log, etcd, the post-start hooks and shutdown, and ends with healthz check passed', async () => {
    const r = await gh.admin.request('GET', '/readyz?verbose');
    assert.equal(r.status, 200, r.text);
    const lines = checkLines(r.text);
    assert.deepEqual(lines.slice(0, 3), ['[+]ping ok', '[+]log ok', '[+]etcd ok']);
    const hooks = lines.filter((l) => l.startsWith('[+]poststarthook/'));
    assert.ok(hooks.length >= 1, r.text);
    for (const h of hooks) assert.match(h, /^\[\+\]poststarthook\/[a-z0-9/-]+ ok$/);
    assert.equal(lines.at(-2), '[+]shutdown ok');
    assert.equal(lines.at(-1), 'healthz check passed');
    assert.ok(
      lines.every((l) => l.startsWith('[+]') || l === 'healthz check passed'),
      r.text,
    );
  });

  it("livez?verbose lists the same checks except shutdown, and the controllers' leaderElection (never in readyz)", async () => {
    const ready = checkLines((await gh.admin.request('GET', '/readyz?verbose')).text);
    assert.ok(!ready.some((l) => l.includes('leaderElection')), 'not being leader never makes a process unready');
    const r = await gh.admin.request('GET', '/livez?verbose');
    assert.equal(r.status, 200, r.text);
    const lines = checkLines(r.text);
    const expected = ready.filter((l) => l !== '[+]shutdown ok');
    expected.splice(3, 0, '[+]leaderElection ok');
    assert.deepEqual(lines, expected);
  });

  it('healthz?verbose (deprecated) passes with the same checks as livez', async () => {
    const r = await gh.admin.request('GET', '/healthz?verbose');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(checkLines(r.text), checkLines((await gh.admin.request('GET', '/livez?verbose')).text));
  });

  it('without verbose the answer is ok', async () => {
    for (const path of ['/livez', '/readyz', '/healthz']) {
      const r = await gh.admin.request('GET', path);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      assert.equal(r.text, 'ok');
    }
  });

  it('exclude marks the named checks as excluded and warns about names that match none', async () => {
    const r = await gh.admin.request('GET', '/readyz?verbose&exclude=etcd&exclude=log&exclude=no-such-check');
    assert.equal(r.status, 200, r.text);
    const lines = checkLines(r.text);
    assert.ok(lines.includes('[+]etcd excluded: ok'), r.text);
    assert.ok(lines.includes('[+]log excluded: ok'), r.text);
    assert.ok(lines.includes('[+]ping ok'), r.text);
    assert.match(r.text, /^warn: some health checks cannot be excluded: no matches for "no-such-check"$/m);
    assert.equal(lines.at(-1), 'healthz check passed');
  });

  it('single checks answer ok, and unknown ones 404', async () => {
    for (const path of [
      '/livez/ping',
      '/livez/log',
      '/livez/etcd',
      '/readyz/ping',
      '/readyz/etcd',
      '/readyz/shutdown',
      '/readyz/poststarthook/bootstrap-namespaces',
    ]) {
      const r = await gh.admin.request('GET', path);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      assert.equal(r.text, 'ok', path);
    }
    for (const path of ['/readyz/no-such-check', '/livez/shutdown']) {
      const r = await gh.admin.request('GET', path);
      assert.equal(r.status, 404, `${path}: ${r.text}`);
    }
  });
});
