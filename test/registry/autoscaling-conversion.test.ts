// HorizontalPodAutoscalers between autoscaling/v2 and v1: every metric source,
// the current metrics, the behavior and the conditions survive a trip through
// v1's annotations, and a v1 object's own fields map as kube maps them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KObject } from '../../lib/api/meta.js';
import { hpaToV1, hpaToV2 } from '../../lib/registry/builtins/autoscaling-conversion.js';
import { hpaTargets } from '../../lib/registry/builtins/autoscaling.js';
import { decodeEnvelope, encodeEnvelope } from '../../lib/protobuf/codec.js';

const sel = { matchLabels: { app: 'web' } };
const V2: KObject = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'all', namespace: 'default', annotations: { team: 'a' } },
  spec: {
    scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
    minReplicas: 2,
    maxReplicas: 9,
    metrics: [
      {
        type: 'Object',
        object: {
          describedObject: { kind: 'Service', name: 'web', apiVersion: 'v1' },
          target: { type: 'Value', value: '10k' },
          metric: { name: 'rps', selector: sel },
        },
      },
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '2' } } },
      { type: 'External', external: { metric: { name: 'queue', selector: sel }, target: { type: 'AverageValue', averageValue: '30' } } },
      { type: 'ContainerResource', containerResource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' }, container: 'app' } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Min', policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } },
  },
  status: {
    currentReplicas: 4,
    desiredReplicas: 5,
    currentMetrics: [
      { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '3' } } },
      { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '300m', averageUtilization: 75 } } },
    ],
    conditions: [{ type: 'ScalingActive', status: 'True', lastTransitionTime: '2026-11-29T10:00:00Z', reason: 'ValidMetricFound', message: 'ok' }],
  },
};

test('a v2 object goes through v1 and back with nothing lost', () => {
  const v1 = hpaToV1(V2);
  assert.equal(v1.apiVersion, 'autoscaling/v1');
  assert.deepEqual(v1['spec'], {
    scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
    minReplicas: 2,
    maxReplicas: 9,
    targetCPUUtilizationPercentage: 70,
  });
  assert.deepEqual(v1['status'], { currentReplicas: 4, desiredReplicas: 5, currentCPUUtilizationPercentage: 75 });
  const ann = v1.metadata.annotations!;
  assert.equal(ann['team'], 'a');
  assert.deepEqual(JSON.parse(ann['autoscaling.alpha.kubernetes.io/metrics']!)[0], {
    type: 'Object',
    object: { target: { kind: 'Service', name: 'web', apiVersion: 'v1' }, metricName: 'rps', targetValue: '10k', selector: sel },
  });
  const back = hpaToV2(v1);
  assert.deepEqual(back, V2);
  // The input is never written into.
  assert.equal(V2.metadata.annotations!['autoscaling.alpha.kubernetes.io/metrics'], undefined);
});

test("a v1 object maps its CPU target, and gets kube's 80% when it names none", () => {
  const base = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'x' } };
  const withTarget = hpaToV2({ ...base, spec: { scaleTargetRef: { kind: 'Deployment', name: 'x' }, maxReplicas: 3, targetCPUUtilizationPercentage: 40 } });
  assert.deepEqual(withTarget['spec'], {
    scaleTargetRef: { kind: 'Deployment', name: 'x' },
    maxReplicas: 3,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 40 } } }],
  });
  const implicit = hpaToV2({ ...base, spec: { scaleTargetRef: { kind: 'Deployment', name: 'x' }, maxReplicas: 3 } });
  assert.deepEqual((implicit['spec'] as { metrics: unknown }).metrics, [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
  ]);
  assert.deepEqual(implicit['status'], { desiredReplicas: 0 });
});

test("the Targets column is kube's formatHPAMetrics, statuses matched by index", () => {
  assert.equal(hpaTargets(V2), '<unknown>/10k, <unknown>/2 + 3 more...');
  const one: KObject = {
    ...V2,
    spec: { metrics: [(V2['spec'] as { metrics: unknown[] }).metrics[4]] },
    status: { currentMetrics: [(V2['status'] as { currentMetrics: unknown[] }).currentMetrics[1]] },
  };
  assert.equal(hpaTargets(one), 'cpu: 75%/70%');
  assert.equal(hpaTargets({ ...V2, spec: {} }), '<none>');
});

test('both versions encode to protobuf and back unchanged', () => {
  for (const o of [V2, hpaToV1(V2)]) assert.deepEqual(decodeEnvelope(encodeEnvelope(o)).object, o);
});

test("a client's annotation named __proto__ is data through both conversions", () => {
  const annotations = JSON.parse('{"__proto__":"kept","team":"a"}') as Record<string, string>;
  const v2 = { ...V2, metadata: { ...V2.metadata, annotations } };
  const back = hpaToV2(hpaToV1(v2));
  const ann = back.metadata.annotations!;
  assert.ok(Object.hasOwn(ann, '__proto__'));
  assert.equal(ann['__proto__' as 'team'], 'kept');
  assert.equal(Object.getPrototypeOf(ann), Object.prototype);
});
