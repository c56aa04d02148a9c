// core/v1 ReplicationControllers and PodTemplates through kubectl against a
// started server: kube's defaults (an RC's selector and labels from its
// template), `kubectl get` columns, `kubectl scale`, status only through
// /status, generation, the three patches, server-side apply and delete.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const NS = '/api/v1/namespaces/default';

const RC = `apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: legacy, tier: back}}
    spec: {containers: [{name: c, image: "busybox:1.36", ports: [{containerPort: 8080}]}]}
`;
const TEMPLATE = `apiVersion: v1
kind: PodTemplate
metadata: {name: tpl}
template:
  metadata: {labels: {app: tpl}}
  spec: {containers: [{name: a, image: nginx}, {name: b, image: redis}]}
`;

describe('core/v1 ReplicationControllers and PodTemplates with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('defaults a replication controller from its template', async () => {
    assert.match(await ctx.k.ok(['apply', '--server-side', '-f', '-'], RC), /replicationcontroller\/legacy serverside-applied/);
    const rc = (await ctx.s.admin.request('GET', `${NS}/replicationcontrollers/legacy`)).json;
    assert.deepEqual(rc.spec.selector, { app: 'legacy', tier: 'back' });
    assert.deepEqual(rc.metadata.labels, { app: 'legacy', tier: 'back' });
    assert.equal(rc.metadata.generation, 1);
    assert.deepEqual(rc.status, { replicas: 0 });
    const c = rc.spec.template.spec.containers[0];
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.deepEqual(c.ports, [{ containerPort: 8080, protocol: 'TCP' }]);
    assert.equal(rc.spec.template.spec.restartPolicy, 'Always');
    // Applied again unchanged: no diff.
    const diff = await ctx.k.run(['diff', '--server-side', '-f', '-'], RC);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
  });

  it('scales and shows kubectl get columns', async () => {
    assert.match(await ctx.k.ok(['scale', 'rc', 'legacy', '--replicas=5']), /replicationcontroller\/legacy scaled/);
    const scale = await ctx.s.admin.request('GET', `${NS}/replicationcontrollers/legacy/scale`);
    assert.deepEqual(scale.json.spec, { replicas: 5 });
    assert.deepEqual(scale.json.status, { replicas: 0, selector: 'app=legacy,tier=back' });
    const st = await ctx.s.admin.request(
      'PATCH',
      `${NS}/replicationcontrollers/legacy/status`,
      { status: { replicas: 5, readyReplicas: 4 } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    assert.equal(st.status, 200, st.text);
    assert.equal(st.json.metadata.generation, 2);
    const out = await ctx.k.ok(['get', 'rc', 'legacy', '-o', 'wide']);
    const [head, row] = out.trim().split('\n');
    assert.deepEqual(head!.trim().split(/\s{2,}/), ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    const cells = row!.split(/\s+/);
    assert.deepEqual([...cells.slice(0, 4), ...cells.slice(5)], ['legacy', '5', '5', '4', 'c', 'busybox:1.36', 'app=legacy,tier=back']);
  });

  it('refuses a template that does not match the selector', async () => {
    const r = await ctx.k.run(['patch', 'rc', 'legacy', '--type=strategic', '-p', '{"spec":{"template":{"metadata":{"labels":{"app":"other"}}}}}']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /spec.template.metadata.labels: Invalid value: map\[string\]string\{"app":"other", "tier":"back"\}: `selector` does not match template `labels`/,
    );
  });

  it('keeps pod templates with their generation and columns', async () => {
    await ctx.k.ok(['create', '-f', '-'], TEMPLATE);
    let t = (await ctx.s.admin.request('GET', `${NS}/podtemplates/tpl`)).json;
    assert.equal(t.metadata.generation, 1);
    assert.equal(t.template.spec.terminationGracePeriodSeconds, 30);
    assert.equal(t.template.spec.containers[1].terminationMessagePath, '/dev/termination-log');
    await ctx.k.ok(['patch', 'podtemplate', 'tpl', '--type=json', '-p', '[{"op":"replace","path":"/template/spec/containers/1/image","value":"redis:7"}]']);
    await ctx.k.ok(['patch', 'podtemplate', 'tpl', '--type=merge', '-p', '{"metadata":{"annotations":{"note":"x"}}}']);
    t = (await ctx.s.admin.request('GET', `${NS}/podtemplates/tpl`)).json;
    assert.equal(t.metadata.generation, 2);
    const out = await ctx.k.ok(['get', 'podtemplates']);
    const [head, row] = out.trim().split('\n');
    assert.deepEqual(head!.trim().split(/\s{2,}/), ['NAME', 'CONTAINERS', 'IMAGES', 'POD LABELS']);
    assert.deepEqual(row!.split(/\s+/), ['tpl', 'a,b', 'nginx,redis:7', 'app=tpl']);
  });

  it('deletes both', async () => {
    await ctx.k.ok(['delete', 'rc/legacy', 'podtemplate/tpl']);
    assert.equal((await ctx.s.admin.request('GET', `${NS}/replicationcontrollers/legacy`)).status, 404);
    assert.equal((await ctx.s.admin.request('GET', `${NS}/podtemplates/tpl`)).status, 404);
  });
});
