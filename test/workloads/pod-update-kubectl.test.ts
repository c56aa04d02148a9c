// kube's ValidatePodUpdate through kubectl and the API: an update of a Pod
// itself may change images, lower activeDeadlineSeconds, add tolerations,
// remove scheduling gates (and, while gated, add to the node selector);
// anything else is refused with kube's message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';
import { POD_UPDATE_FORBIDDEN } from '../../lib/registry/builtins/pod-spec-update.js';

const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONPATCH = { 'content-type': 'application/json-patch+json' };

function pod(name: string, extra: object = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'a', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }], ...extra },
  };
}

describe('pod updates as kube-apiserver allows them', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  const create = async (body: object) => {
    const r = await ctx.s.admin.request('POST', `${NS}/pods`, body);
    assert.equal(r.status, 201, r.text);
    return r.json;
  };

  it('takes a new image from kubectl set image and refuses a changed port with kube message', async () => {
    await create(pod('upd-image'));
    await ctx.k.ok(['set', 'image', 'pod/upd-image', 'a=nginx:1.28']);
    assert.equal(await ctx.k.ok(['get', 'pod', 'upd-image', '-o', 'jsonpath={.spec.containers[0].image}']), 'nginx:1.28');

    const r = await ctx.k.run([
      'patch',
      'pod',
      'upd-image',
      '--type=merge',
      '-p',
      '{"spec":{"containers":[{"name":"a","image":"nginx:1.28","ports":[{"containerPort":81}]}]}}',
    ]);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(`The Pod "upd-image" is invalid: spec: Forbidden: ${POD_UPDATE_FORBIDDEN}`), r.stderr);
    assert.match(r.stderr, /containers\[0\]\.ports\[0\]\.containerPort: 80\n.*containers\[0\]\.ports\[0\]\.containerPort: 81/);

    // kubectl replace (a PUT of the whole edited object) is refused the same way, and nothing is stored.
    const live = JSON.parse(await ctx.k.ok(['get', 'pod', 'upd-image', '-o', 'json']));
    live.spec.restartPolicy = 'Never';
    const put = await ctx.k.run(['replace', '-f', '-'], JSON.stringify(live));
    assert.notEqual(put.code, 0);
    assert.ok(put.stderr.includes(POD_UPDATE_FORBIDDEN), put.stderr);
    assert.equal(await ctx.k.ok(['get', 'pod', 'upd-image', '-o', 'jsonpath={.spec.restartPolicy}/{.spec.containers[0].ports[0].containerPort}']), 'Always/80');
  });

  it('refuses adding or removing a container', async () => {
    await create(pod('upd-count'));
    const r = await ctx.s.admin.request(
      'PATCH',
      `${NS}/pods/upd-count`,
      [{ op: 'add', path: '/spec/containers/-', value: { name: 'b', image: 'busybox' } }],
      JSONPATCH,
    );
    assert.equal(r.status, 422);
    assert.deepEqual(r.json.details.causes, [
      { reason: 'FieldValueForbidden', message: 'Forbidden: pod updates may not add or remove containers', field: 'spec.containers' },
    ]);
  });

  it('lets activeDeadlineSeconds be set or lowered, never raised or unset', async () => {
    await create(pod('upd-deadline'));
    const set = async (v: number | null) => ctx.s.admin.request('PATCH', `${NS}/pods/upd-deadline`, { spec: { activeDeadlineSeconds: v } }, MERGE);
    assert.equal((await set(100)).status, 200);
    assert.equal((await set(50)).status, 200);
    const up = await set(60);
    assert.equal(up.status, 422);
    assert.equal(up.json.message, 'Pod "upd-deadline" is invalid: spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value');
    const unset = await set(null);
    assert.equal(unset.status, 422);
    assert.equal(unset.json.details.causes[0].message, 'Invalid value: null: must not update from a positive integer to nil value');
    const neg = await set(-1);
    assert.equal(neg.json.details.causes[0].message, 'Invalid value: -1: must be between 0 and 2147483647, inclusive');
  });

  it('lets tolerations be added and their tolerationSeconds change, not removed', async () => {
    const t = { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 };
    await create(pod('upd-tol', { tolerations: [t] }));
    const tol = (list: object[]) => ctx.s.admin.request('PATCH', `${NS}/pods/upd-tol`, { spec: { tolerations: list } }, MERGE);
    assert.equal(
      (
        await tol([
          { ...t, tolerationSeconds: 10 },
          { key: 'x', operator: 'Exists' },
        ])
      ).status,
      200,
    );
    const gone = await tol([{ key: 'x', operator: 'Exists' }]);
    assert.equal(gone.status, 422);
    assert.deepEqual(gone.json.details.causes, [
      { reason: 'FieldValueForbidden', message: 'Forbidden: existing toleration can not be modified except its tolerationSeconds', field: 'spec.tolerations' },
    ]);
  });

  it('lets scheduling gates go, not come; a gated pod may gain node selector entries only', async () => {
    await create(pod('upd-gates', { schedulingGates: [{ name: 'g1' }, { name: 'g2' }], nodeSelector: { zone: 'a' } }));
    const patch = (spec: object) => ctx.s.admin.request('PATCH', `${NS}/pods/upd-gates`, { spec }, MERGE);
    const add = await patch({ schedulingGates: [{ name: 'g1' }, { name: 'g2' }, { name: 'g3' }] });
    assert.equal(add.status, 422);
    assert.equal(
      add.json.message,
      `Pod "upd-gates" is invalid: spec.schedulingGates[2].name: Forbidden: only deletion is allowed, but found new scheduling gate 'g3'`,
    );
    assert.equal((await patch({ nodeSelector: { zone: 'a', disk: 'ssd' } })).status, 200);
    const changed = await patch({ nodeSelector: { zone: 'b', disk: 'ssd' } });
    assert.equal(changed.status, 422);
    assert.equal(changed.json.details.causes[0].field, 'spec.nodeSelector');
    assert.match(changed.json.details.causes[0].message, /only additions to spec\.nodeSelector are allowed \(no mutations or deletions\)$/);
    assert.equal((await patch({ schedulingGates: [{ name: 'g2' }] })).status, 200);
    assert.equal((await patch({ schedulingGates: null })).status, 200);
    // Ungated, the node selector is as fixed as the rest of the spec.
    const late = await patch({ nodeSelector: { zone: 'a', disk: 'ssd', more: 'x' } });
    assert.equal(late.status, 422);
    assert.ok(late.json.message.includes(POD_UPDATE_FORBIDDEN), late.json.message);
  });

  it('lets a negative grace period be set to 1 and nothing else', async () => {
    await create(pod('upd-grace', { terminationGracePeriodSeconds: -5 }));
    const grace = (v: number) => ctx.s.admin.request('PATCH', `${NS}/pods/upd-grace`, { spec: { terminationGracePeriodSeconds: v } }, MERGE);
    assert.equal((await grace(2)).status, 422);
    assert.equal((await grace(1)).status, 200);
  });

  it('leaves labels, annotations and status writes alone', async () => {
    await create(pod('upd-meta'));
    await ctx.k.ok(['label', 'pod', 'upd-meta', 'tier=web']);
    await ctx.k.ok(['annotate', 'pod', 'upd-meta', 'note=x']);
    const st = await ctx.s.admin.request('PATCH', `${NS}/pods/upd-meta/status`, { status: { phase: 'Running' } }, MERGE);
    assert.equal(st.status, 200, st.text);
  });
});
