// Graceful shutdown of the real process: on SIGTERM /readyz fails at once,
// /livez and ordinary requests keep being served for --shutdown-delay-duration,
// then open watches end and the process exits 0.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startGatehouse, stopAll } from './helpers.js';

after(stopAll);

describe('gatehouse serve --shutdown-delay-duration=2s on SIGTERM', () => {
  it('fails /readyz at once, keeps serving during the delay, ends the open watch and exits 0', async () => {
    const gh = await startGatehouse({ flags: ['--shutdown-delay-duration=2s', '--storage-backend=file'] });
    const created = await gh.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'before' },
      data: { a: 'b' },
    });
    assert.equal(created.status, 201, created.text);
    const watch = await gh.admin.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${created.json.metadata.resourceVersion as string}`);
    assert.equal(watch.status, 200);

    gh.proc.kill('SIGTERM');
    // The server logs when it has begun shutting down; from then on /readyz must fail.
    await gh.proc.waitFor('the shutdown log line', (p) => /received SIGTERM/.test(p.stderr));

    const readyz = await gh.admin.request('GET', '/readyz');
    assert.notEqual(readyz.status, 200, 'readyz fails at once after SIGTERM');
    const verbose = await gh.admin.request('GET', '/readyz?verbose');
    assert.notEqual(verbose.status, 200);
    assert.match(verbose.text, /^\[-\]shutdown failed/m);
    assert.match(verbose.text, /^\[\+\]ping ok$/m);
    assert.match(verbose.text, /healthz check failed\s*$/);
    const single = await gh.admin.request('GET', '/readyz/shutdown');
    assert.notEqual(single.status, 200);

    // During the delay the process is alive and serving.
    const livez = await gh.admin.request('GET', '/livez');
    assert.equal(livez.status, 200, livez.text);
    assert.equal((await gh.admin.request('GET', '/livez?verbose')).status, 200);
    const list = await gh.admin.request('GET', '/api/v1/namespaces');
    assert.equal(list.status, 200, list.text);
    const during = await gh.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'during-delay' },
      data: { c: 'd' },
    });
    assert.equal(during.status, 201, during.text);
    assert.ok(gh.proc.running, 'the process is still running during the delay');

    // The watch saw the create made during the delay, then is ended by the server.
    const ev = await watch.next(10_000);
    assert.equal(ev?.type, 'ADDED');
    assert.equal(ev?.object.metadata.name, 'during-delay');
    assert.ok(await watch.waitEnd(30_000), 'the open watch is ended by the server');

    gh.admin.close();
    const exit = await gh.proc.waitExit(30_000);
    assert.deepEqual(exit, { code: 0, signal: null }, gh.proc.stderr);
    assert.match(gh.proc.stderr, /shutdown complete/);
  });

  it('exits 0 on SIGINT too, and the data written before is there on the next start', async () => {
    const gh = await startGatehouse({ flags: ['--storage-backend=file'] });
    const created = await gh.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kept' },
      data: { k: 'v' },
    });
    assert.equal(created.status, 201, created.text);
    gh.admin.close();
    gh.proc.kill('SIGINT');
    assert.deepEqual(await gh.proc.waitExit(30_000), { code: 0, signal: null }, gh.proc.stderr);

    const again = await startGatehouse({ dataDir: gh.dataDir, flags: ['--storage-backend=file'] });
    const got = await again.admin.request('GET', '/api/v1/namespaces/default/configmaps/kept');
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
    assert.deepEqual(await again.stop(), { code: 0, signal: null });
  });
});
