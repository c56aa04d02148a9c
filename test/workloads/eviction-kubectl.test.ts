// pods/eviction as kube's EvictionREST answers it, through the API and
// `kubectl drain`: pods that never ran go at once; a running pod is weighed
// against the PodDisruptionBudget selecting it (429 while the budget is
// unprocessed or spent, its disruptionsAllowed decremented otherwise),
// dry-run decides without writing. No disruption controller runs here, so the
// tests write each budget's status through /status as that controller would.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const NS = '/api/v1/namespaces/default';
const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
const MERGE = { 'content-type': 'application/merge-patch+json' };

const eviction = (name: string, extra: object = {}) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name }, ...extra });

describe('pods/eviction and PodDisruptionBudgets', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  /** A pod its node agent would report Running (and Ready unless told otherwise). */
  async function runningPod(name: string, labels: Record<string, string>, ready = true, nodeName?: string): Promise<void> {
    const spec = { containers: [{ name: 'c', image: 'nginx' }], ...(nodeName ? { nodeName } : {}) };
    const r = await ctx.s.admin.request('POST', `${NS}/pods`, { metadata: { name, labels }, spec });
    assert.equal(r.status, 201, r.text);
    const conditions = ready ? [{ type: 'Ready', status: 'True' }] : [{ type: 'Ready', status: 'False' }];
    const st = await ctx.s.admin.request('PATCH', `${NS}/pods/${name}/status`, { status: { phase: 'Running', conditions } }, MERGE);
    assert.equal(st.status, 200, st.text);
  }

  async function budget(name: string, selector: object, status?: object): Promise<void> {
    const r = await ctx.s.admin.request('POST', PDBS, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name },
      spec: { minAvailable: 1, selector },
    });
    assert.equal(r.status, 201, r.text);
    if (status) {
      const st = await ctx.s.admin.request('PATCH', `${PDBS}/${name}/status`, { status }, MERGE);
      assert.equal(st.status, 200, st.text);
    }
  }

  const evict = (name: string, extra: object = {}, query = '') => ctx.s.admin.request('POST', `${NS}/pods/${name}/eviction${query}`, eviction(name, extra));
  const exists = async (name: string) => (await ctx.s.admin.request('GET', `${NS}/pods/${name}`)).status === 200;

  it('deletes a pod that never ran at once', async () => {
    assert.equal(
      (await ctx.s.admin.request('POST', `${NS}/pods`, { metadata: { name: 'pending' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } })).status,
      201,
    );
    const r = await evict('pending');
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    assert.equal(await exists('pending'), false);
    const missing = await evict('pending');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'pods "pending" not found');
  });

  it('refuses while the budget has not been processed, then decrements it', async () => {
    await runningPod('web-a', { app: 'web' });
    await runningPod('web-b', { app: 'web' });
    await budget('web', { matchLabels: { app: 'web' } });
    const early = await evict('web-a');
    assert.equal(early.status, 429, early.text);
    assert.equal(early.headers['retry-after'], '10');
    assert.equal(early.json.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(early.json.details, {
      causes: [{ reason: 'DisruptionTarget', message: 'The disruption budget web is still being processed by the server.' }],
      retryAfterSeconds: 10,
    });
    const st = await ctx.s.admin.request(
      'PATCH',
      `${PDBS}/web/status`,
      { status: { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 } },
      MERGE,
    );
    assert.equal(st.status, 200, st.text);

    // Dry-run: the answer of a real eviction, nothing written.
    const dry = await evict('web-a', {}, '?dryRun=All');
    assert.equal(dry.status, 201, dry.text);
    assert.equal(await exists('web-a'), true);
    assert.equal((await ctx.s.admin.request('GET', `${PDBS}/web`)).json.status.disruptionsAllowed, 1);
    // Dry-run asked in the eviction's own DeleteOptions is honoured too.
    assert.equal((await evict('web-a', { deleteOptions: { dryRun: ['All'] } })).status, 201);
    assert.equal(await exists('web-a'), true);

    const ok = await evict('web-a');
    assert.equal(ok.status, 201, ok.text);
    assert.equal(await exists('web-a'), false);
    const pdb = (await ctx.s.admin.request('GET', `${PDBS}/web`)).json;
    assert.equal(pdb.status.disruptionsAllowed, 0);
    assert.deepEqual(Object.keys(pdb.status.disruptedPods), ['web-a']);
    assert.deepEqual(Object.keys(pdb.status), [
      'observedGeneration',
      'disruptedPods',
      'disruptionsAllowed',
      'currentHealthy',
      'desiredHealthy',
      'expectedPods',
      'conditions',
    ]);
    const cond = pdb.status.conditions[0];
    assert.deepEqual([cond.type, cond.status, cond.reason, cond.observedGeneration, cond.message], ['DisruptionAllowed', 'False', 'InsufficientPods', 1, '']);
    const out = await ctx.k.ok(['get', 'pdb', 'web']);
    assert.deepEqual(out.trim().split('\n')[1]!.split(/\s+/).slice(0, 4), ['web', '1', 'N/A', '0']);

    const spent = await evict('web-b');
    assert.equal(spent.status, 429);
    assert.equal(spent.headers['retry-after'], undefined);
    assert.deepEqual(spent.json.details, {
      causes: [{ reason: 'DisruptionTarget', message: 'The disruption budget web needs 1 healthy pods and has 2 currently' }],
    });
    assert.equal(await exists('web-b'), true);
  });

  it('lets an unready pod go without spending the budget while the budget is healthy', async () => {
    await runningPod('web-unready', { app: 'web' }, false);
    const r = await evict('web-unready');
    assert.equal(r.status, 201, r.text);
    assert.equal(await exists('web-unready'), false);
    assert.equal((await ctx.s.admin.request('GET', `${PDBS}/web`)).json.status.disruptionsAllowed, 0);
  });

  it('refuses a pod two budgets select, and a negative budget', async () => {
    await runningPod('db-0', { app: 'db', tier: 'data' });
    await budget('db-a', { matchLabels: { app: 'db' } }, { observedGeneration: 1, disruptionsAllowed: 1 });
    await budget('db-b', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['data'] }] }, { observedGeneration: 1, disruptionsAllowed: 1 });
    const two = await evict('db-0');
    assert.equal(two.status, 500);
    assert.deepEqual(two.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      code: 500,
    });
    assert.equal((await ctx.s.admin.request('DELETE', `${PDBS}/db-b`)).status, 200);
    await ctx.s.admin.request('PATCH', `${PDBS}/db-a/status`, { status: { disruptionsAllowed: -1 } }, MERGE);
    const negative = await evict('db-0');
    assert.equal(negative.status, 403);
    assert.equal(negative.json.message, 'poddisruptionbudget.policy "db-a" is forbidden: pdb disruptions allowed is negative');
  });

  it('checks the eviction itself', async () => {
    await runningPod('lone', { app: 'lone' });
    const other = await ctx.s.admin.request('POST', `${NS}/pods/lone/eviction`, eviction('someone-else'));
    assert.equal(other.status, 400);
    assert.equal(other.json.message, 'name in URL does not match name in Eviction object');
    const kind = await ctx.s.admin.request('POST', `${NS}/pods/lone/eviction`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'lone' } });
    assert.equal(kind.status, 400);
    const opts = await ctx.s.admin.request('POST', `${NS}/pods/lone/eviction`, eviction('lone', { deleteOptions: 'now' }));
    assert.equal(opts.status, 422);
    assert.equal(opts.json.details.causes[0].field, 'deleteOptions');
    const grace = await ctx.s.admin.request('POST', `${NS}/pods/lone/eviction`, eviction('lone', { deleteOptions: { gracePeriodSeconds: 'soon' } }));
    assert.equal(grace.status, 422);
    assert.equal(await exists('lone'), true);
    // v1beta1 Evictions are still accepted; no budget selects this pod, so it goes.
    const beta = await ctx.s.admin.request('POST', `${NS}/pods/lone/eviction`, { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'lone' } });
    assert.equal(beta.status, 201, beta.text);
    assert.equal(await exists('lone'), false);
  });

  it('kubectl drain evicts what the budget allows and retries the rest', async () => {
    assert.equal((await ctx.s.admin.request('POST', '/api/v1/nodes', { metadata: { name: 'worker-9' } })).status, 201);
    await runningPod('shop-a', { app: 'shop' }, true, 'worker-9');
    await runningPod('shop-b', { app: 'shop' }, true, 'worker-9');
    await budget(
      'shop',
      { matchLabels: { app: 'shop' } },
      { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 },
    );
    const r = await ctx.k.run(['drain', 'worker-9', '--force', '--grace-period=0', '--timeout=3s']);
    assert.notEqual(r.code, 0);
    // kubectl evicts the two at once: whichever comes first takes the one disruption allowed.
    const gone = /pod\/(shop-[ab]) evicted/.exec(r.stdout + r.stderr)?.[1];
    assert.ok(gone, r.stdout + r.stderr);
    const kept = gone === 'shop-a' ? 'shop-b' : 'shop-a';
    assert.ok(
      r.stderr.includes(
        `error when evicting pods/"${kept}" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`,
      ),
      r.stderr,
    );
    assert.equal(await exists(gone), false);
    assert.equal(await exists(kept), true);
    assert.equal((await ctx.s.admin.request('GET', '/api/v1/nodes/worker-9')).json.spec.unschedulable, true);
  });
});
