// autoscaling/v1 and autoscaling/v2 HorizontalPodAutoscalers through kubectl
// against a started server: one object read and written in both versions
// (v1's annotations carry what only v2 can say, and come back), kube's v2
// defaults, `kubectl get hpa` columns, status only through /status, the
// validation people hit, apply and diff, delete.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL, tableRows } from '../helpers/kubectl-server.js';

const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';

const WEB = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  - type: Resource
    resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 300}
`;

const LEGACY = `apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: legacy}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: legacy}
  minReplicas: 2
  maxReplicas: 5
`;

describe('autoscaling/v1 and v2 HorizontalPodAutoscalers with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('applies a v2 object with kube defaults and serves it in v1 with the round-trip annotations', async () => {
    await ctx.k.ok(['apply', '--server-side', '-f', '-'], WEB);
    const diff = await ctx.k.run(['diff', '--server-side', '-f', '-'], WEB);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    const v2 = (await ctx.s.admin.request('GET', `${V2}/web`)).json;
    assert.equal(v2.apiVersion, 'autoscaling/v2');
    assert.equal(v2.spec.minReplicas, 1);
    assert.deepEqual(v2.spec.behavior, {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
    assert.deepEqual(v2.status, { desiredReplicas: 0 });

    const v1 = (await ctx.s.admin.request('GET', `${V1}/web`)).json;
    assert.equal(v1.apiVersion, 'autoscaling/v1');
    assert.deepEqual(v1.spec, {
      scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
      minReplicas: 1,
      maxReplicas: 10,
      targetCPUUtilizationPercentage: 50,
    });
    assert.deepEqual(v1.status, { currentReplicas: 0, desiredReplicas: 0 });
    const ann = v1.metadata.annotations;
    assert.deepEqual(JSON.parse(ann['autoscaling.alpha.kubernetes.io/metrics']), [
      { type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } },
    ]);
    assert.deepEqual(JSON.parse(ann['autoscaling.alpha.kubernetes.io/behavior']), {
      ScaleUp: {
        StabilizationWindowSeconds: 0,
        SelectPolicy: 'Max',
        Policies: [
          { Type: 'Pods', Value: 4, PeriodSeconds: 15 },
          { Type: 'Percent', Value: 100, PeriodSeconds: 15 },
        ],
      },
      ScaleDown: { StabilizationWindowSeconds: 300, SelectPolicy: 'Max', Policies: [{ Type: 'Percent', Value: 100, PeriodSeconds: 15 }] },
    });

    // A v1 client writing back what it read loses nothing.
    const put = await ctx.s.admin.request('PUT', `${V1}/web`, { ...v1, spec: { ...v1.spec, maxReplicas: 12 } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.apiVersion, 'autoscaling/v1');
    const after = (await ctx.s.admin.request('GET', `${V2}/web`)).json;
    assert.equal(after.spec.maxReplicas, 12);
    // kube's v1 conversion puts the annotation's metrics first and the CPU target after them.
    assert.deepEqual(after.spec.metrics, [v2.spec.metrics[1], v2.spec.metrics[0]]);
    assert.deepEqual(after.spec.behavior, v2.spec.behavior);
    assert.equal(after.metadata.annotations, undefined);
  });

  it('creates through v1 with its implicit CPU target, shows kube columns and takes status only through /status', async () => {
    await ctx.k.ok(['create', '-f', '-'], LEGACY);
    const v2 = (await ctx.s.admin.request('GET', `${V2}/legacy`)).json;
    assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    assert.equal(v2.spec.behavior, undefined);

    const status = {
      ...v2,
      status: {
        currentReplicas: 3,
        desiredReplicas: 3,
        currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 42, averageValue: '120m' } } }],
        conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-11-29T10:00:00Z', reason: 'ReadyForNewScale' }],
      },
    };
    const st = await ctx.s.admin.request('PUT', `${V2}/legacy/status`, status);
    assert.equal(st.status, 200, st.text);
    // A main write does not touch status.
    const main = await ctx.s.admin.request('PUT', `${V2}/legacy`, { ...st.json, status: { currentReplicas: 9, desiredReplicas: 9 } });
    assert.equal(main.json.status.currentReplicas, 3);

    const v1 = (await ctx.s.admin.request('GET', `${V1}/legacy`)).json;
    // Nor does a v1 main write that drops the annotations carrying the rest of the status.
    const bare = await ctx.s.admin.request('PUT', `${V1}/legacy`, { ...v1, metadata: { ...v1.metadata, annotations: {} } });
    assert.equal(bare.status, 200, bare.text);
    assert.deepEqual((await ctx.s.admin.request('GET', `${V2}/legacy`)).json.status, st.json.status);
    assert.equal(v1.spec.targetCPUUtilizationPercentage, 80);
    assert.equal(v1.status.currentCPUUtilizationPercentage, 42);
    assert.deepEqual(JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/current-metrics']), [
      { type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 42, currentAverageValue: '120m' } },
    ]);
    assert.equal(JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/conditions'])[0].reason, 'ReadyForNewScale');

    // Two objects, counted once although two versions serve them.
    const metrics = (await ctx.s.admin.request('GET', '/metrics')).text;
    assert.match(metrics, /^apiserver_storage_objects\{resource="horizontalpodautoscalers.autoscaling"\} 2$/m);

    const table = tableRows(await ctx.k.ok(['get', 'hpa']));
    assert.deepEqual(table[0], ['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE']);
    assert.deepEqual(table[1]!.slice(0, 6), ['legacy', 'Deployment/legacy', 'cpu: 42%/80%', '2', '5', '3']);
    assert.deepEqual(table[2]!.slice(0, 6), ['web', 'Deployment/web', 'memory: <unknown>/500Mi, cpu: <unknown>/50%', '1', '12', '0']);
    // The same table through the v1 version.
    const v1table = tableRows(await ctx.k.ok(['get', 'horizontalpodautoscalers.v1.autoscaling', 'legacy']));
    assert.deepEqual(v1table[1]!.slice(0, 6), ['legacy', 'Deployment/legacy', 'cpu: 42%/80%', '2', '5', '3']);
  });

  it('patches both ways and lists in either version', async () => {
    await ctx.k.ok(['patch', 'hpa', 'legacy', '--type=merge', '-p', '{"spec":{"maxReplicas":7}}']);
    await ctx.k.ok([
      'patch',
      'horizontalpodautoscalers.v1.autoscaling',
      'legacy',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/targetCPUUtilizationPercentage","value":65}]',
    ]);
    await ctx.k.ok(['patch', 'hpa', 'legacy', '--type=strategic', '-p', '{"spec":{"minReplicas":3}}']);
    const v2 = (await ctx.s.admin.request('GET', `${V2}/legacy`)).json;
    assert.equal(v2.spec.maxReplicas, 7);
    assert.equal(v2.spec.minReplicas, 3);
    assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 65 } } }]);
    assert.equal(v2.status.currentReplicas, 3);
    const list = (await ctx.s.admin.request('GET', V1)).json;
    assert.equal(list.kind, 'HorizontalPodAutoscalerList');
    assert.deepEqual(
      list.items.map((o: { apiVersion: string; metadata: { name: string } }) => [o.apiVersion, o.metadata.name]),
      [
        ['autoscaling/v1', 'legacy'],
        ['autoscaling/v1', 'web'],
      ],
    );
  });

  it('watches in v1 and explains both versions from the published schemas', async () => {
    const w = await ctx.s.admin.request('GET', `${V1}?watch=1&timeoutSeconds=1`);
    const events = w.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e: { type: string; object: { apiVersion: string; metadata: { name: string } } }) => [e.type, e.object.apiVersion, e.object.metadata.name]),
      [
        ['ADDED', 'autoscaling/v1', 'legacy'],
        ['ADDED', 'autoscaling/v1', 'web'],
      ],
    );
    const v2 = await ctx.k.ok(['explain', 'hpa.spec.behavior.scaleDown']);
    assert.match(v2, /VERSION:\s+v2/);
    assert.match(v2, /stabilizationWindowSeconds\s+<integer>/);
    const v1 = await ctx.k.ok(['explain', 'hpa.spec', '--api-version=autoscaling/v1']);
    assert.match(v1, /targetCPUUtilizationPercentage\s+<integer>/);
  });

  it('compares server-side apply owners across the two versions', async () => {
    const v1 = (max: number) =>
      `apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: ${max}\n`;
    // The first test's v1 PUT (the test client, a manager without a name) owns maxReplicas, recorded in v1.
    const r = await ctx.k.run(['apply', '--server-side', '--field-manager=ops', '-f', '-'], v1(20));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /conflict with "" using autoscaling\/v1: \.spec\.maxReplicas/);
    await ctx.k.ok(['apply', '--server-side', '--field-manager=ops', '--force-conflicts', '-f', '-'], v1(20));
    const v2 = (await ctx.s.admin.request('GET', `${V2}/web`)).json;
    assert.equal(v2.spec.maxReplicas, 20);
    const ops = v2.metadata.managedFields.find((m: { manager: string }) => m.manager === 'ops');
    assert.equal(ops.apiVersion, 'autoscaling/v1');
    assert.ok(ops.fieldsV1['f:spec']['f:maxReplicas']);
  });

  it('applies a v1 manifest client-side again without a change', async () => {
    const manifest = LEGACY.replace('name: legacy}', 'name: old-style}').replace('maxReplicas: 5', 'maxReplicas: 5\n  targetCPUUtilizationPercentage: 70');
    assert.match(await ctx.k.ok(['apply', '-f', '-'], manifest), /horizontalpodautoscaler.autoscaling\/old-style created/);
    assert.match(await ctx.k.ok(['apply', '-f', '-'], manifest), /horizontalpodautoscaler.autoscaling\/old-style unchanged/);
    const diff = await ctx.k.run(['diff', '-f', '-'], manifest);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    await ctx.k.ok(['delete', '-f', '-'], manifest);
  });

  it('kubectl autoscale makes an HPA for a deployment', async () => {
    await ctx.k.ok(['create', 'deployment', 'api', '--image=nginx']);
    const out = await ctx.k.ok(['autoscale', 'deployment', 'api', '--cpu-percent=60', '--min=2', '--max=6']);
    assert.match(out, /horizontalpodautoscaler.autoscaling\/api autoscaled/);
    const hpa = (await ctx.s.admin.request('GET', `${V2}/api`)).json;
    assert.deepEqual(hpa.spec.scaleTargetRef, { kind: 'Deployment', name: 'api', apiVersion: 'apps/v1' });
    assert.equal(hpa.spec.minReplicas, 2);
    assert.equal(hpa.spec.maxReplicas, 6);
    assert.deepEqual(hpa.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }]);
    await ctx.k.ok(['delete', 'hpa', 'api']);
    await ctx.k.ok(['delete', 'deployment', 'api']);
  });

  it('refuses what kube refuses, naming the field', async () => {
    const bad = (spec: string) => `apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: bad}\nspec:\n${spec}`;
    const ref = '  scaleTargetRef: {kind: Deployment, name: web}\n';
    let r = await ctx.k.run(['create', '-f', '-'], bad(`${ref}  minReplicas: 4\n  maxReplicas: 2\n`));
    assert.match(r.stderr, /spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`/);
    r = await ctx.k.run(['create', '-f', '-'], bad(`${ref}  maxReplicas: 0\n`));
    assert.match(r.stderr, /spec.maxReplicas: Invalid value: 0: must be greater than 0/);
    r = await ctx.k.run(['create', '-f', '-'], bad('  scaleTargetRef: {kind: Deployment}\n  maxReplicas: 1\n'));
    assert.match(r.stderr, /spec.scaleTargetRef.name: Required value/);
    r = await ctx.k.run(
      ['create', '-f', '-'],
      bad(`${ref}  maxReplicas: 3\n  metrics:\n  - type: Pods\n    pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: lots}}\n`),
    );
    assert.match(r.stderr, /spec.metrics\[0\].pods.target.averageValue: Invalid value: "lots": quantities must match the regular expression/);
    r = await ctx.k.run(['create', '-f', '-'], bad(`${ref}  maxReplicas: 3\n  behavior:\n    scaleUp: {selectPolicy: Fastest, policies: []}\n`));
    assert.match(r.stderr, /spec.behavior.scaleUp.selectPolicy: Unsupported value: "Fastest": supported values: "Disabled", "Max", "Min"/);
    assert.match(r.stderr, /spec.behavior.scaleUp.policies: Required value: must specify at least one Policy/);
    // Through v1, the internal (v2) field is named, as kube names it.
    r = await ctx.k.run(
      ['create', '-f', '-'],
      'apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: bad}\nspec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 3\n  targetCPUUtilizationPercentage: 0\n',
    );
    assert.match(r.stderr, /spec.metrics\[0\].resource.target.averageUtilization: Invalid value: 0: must be greater than 0/);
    assert.equal((await ctx.s.admin.request('GET', `${V2}/bad`)).status, 404);

    await ctx.k.ok(['delete', 'hpa', 'web', 'legacy']);
    assert.equal((await ctx.s.admin.request('GET', V2)).json.items.length, 0);
  });
});
