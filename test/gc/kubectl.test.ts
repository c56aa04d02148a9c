// kubectl delete --cascade=background|foreground|orphan, --grace-period,
// --force and -l against the garbage collector.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';
import { configMap, gone, until } from './helpers.js';

describe('kubectl delete and garbage collection', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  for (const cascade of ['background', 'foreground'] as const) {
    it(`deletes a chain with --cascade=${cascade}`, async () => {
      const a = await configMap(ctx.s.admin, `k-${cascade}-a`);
      const b = await configMap(ctx.s.admin, `k-${cascade}-b`, [a], true);
      const c = await configMap(ctx.s.admin, `k-${cascade}-c`, [b], true);
      await ctx.k.ok(['delete', 'configmap', a.name, `--cascade=${cascade}`, '--wait=true', '--timeout=20s']);
      await until('the chain to go', async () => (await gone(ctx.s.admin, b.path)) && (await gone(ctx.s.admin, c.path)));
    });
  }

  it('keeps dependents with --cascade=orphan', async () => {
    const a = await configMap(ctx.s.admin, 'k-orphan-a');
    const b = await configMap(ctx.s.admin, 'k-orphan-b', [a]);
    await ctx.k.ok(['delete', 'configmap', a.name, '--cascade=orphan']);
    await until('the owner to go', () => gone(ctx.s.admin, a.path));
    const g = await ctx.s.admin.request('GET', b.path);
    assert.equal(g.status, 200);
    assert.equal(g.json.metadata.ownerReferences, undefined);
  });

  it('deletes by label with -l', async () => {
    for (const n of ['k-l-1', 'k-l-2'])
      await ctx.s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: n, labels: { tier: 'gc' } },
      });
    const out = await ctx.k.ok(['delete', 'configmaps', '-l', 'tier=gc']);
    assert.match(out, /k-l-1.*deleted[\s\S]*k-l-2.*deleted/);
  });

  it('leaves a bound pod terminating and removes it with --grace-period=0 --force', async () => {
    const p = await ctx.s.admin.request('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'k-bound' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
    });
    assert.equal(p.status, 201, p.text);
    await ctx.k.ok(['delete', 'pod', 'k-bound', '--grace-period=20', '--wait=false']);
    const g = await ctx.s.admin.request('GET', '/api/v1/namespaces/default/pods/k-bound');
    assert.equal(g.json.metadata.deletionGracePeriodSeconds, 20);
    const r = await ctx.k.run(['delete', 'pod', 'k-bound', '--grace-period=0', '--force']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Immediate deletion does not wait/);
    assert.equal((await ctx.s.admin.request('GET', '/api/v1/namespaces/default/pods/k-bound')).status, 404);
  });
});
