// The empty structs kube's Go types always write, decided by the generated
// tables (TypeDef.z from the struct tags), added to built-in objects on write.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { builtinSchemaOf } from '../../lib/schema/index.js';
import { coreV1 } from '../../lib/schema/gen/core-v1.js';
import { metaV1 } from '../../lib/schema/gen/meta-v1.js';
import { fillZeros, withZeros } from '../../lib/schema/zeros.js';
import { deepFreezeJson } from '../../lib/api/json.js';

describe('zero values from the tables', () => {
  it('records what encoding/json writes when empty: struct values always, omitempty scalars never', () => {
    assert.deepEqual(coreV1.types['ServiceStatus']!.z, { loadBalancer: {} }, 'LoadBalancerStatus is a struct value with omitempty');
    assert.deepEqual(coreV1.types['ServicePort']!.z, { port: 0, targetPort: 0 }, 'port has no omitempty; IntOrString is a struct');
    assert.equal(coreV1.types['ServiceSpec']!.z, undefined, 'every ServiceSpec field is omitempty or a pointer');
    assert.equal(metaV1.types['StatusDetails']!.z, undefined, 'group, name, kind… are all omitempty');
    assert.deepEqual(metaV1.types['Status']!.z, { metadata: {} });
  });

  it('adds a missing struct whole, as Go writes a zero struct: a bare Node reads back and writes again', () => {
    const node = builtinSchemaOf('', 'v1', 'Node')!;
    const obj: Record<string, unknown> = { kind: 'Node', metadata: { name: 'n' } };
    fillZeros(node, obj);
    const status = obj['status'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(status['daemonEndpoints'], { kubeletEndpoint: { Port: 0 } });
    assert.equal(status['nodeInfo']!['machineID'], '');
    assert.equal(status['nodeInfo']!['architecture'], '');
    const partial: Record<string, unknown> = { kind: 'Node', metadata: { name: 'n' }, status: { nodeInfo: { machineID: 'm' } } };
    fillZeros(node, partial);
    assert.deepEqual((partial['status'] as Record<string, unknown>)['nodeInfo'], { machineID: 'm' }, "a client's own struct keeps its absent scalars absent");
  });

  it('adds the empty structs a Service and a Pod carry, copying frozen parts instead of writing into them', () => {
    const svc = builtinSchemaOf('', 'v1', 'Service')!;
    const obj: Record<string, unknown> = { kind: 'Service', metadata: { name: 'a' }, spec: { ports: [{ port: 80 }] } };
    fillZeros(svc, obj);
    assert.deepEqual(obj['status'], { loadBalancer: {} });
    assert.deepEqual(obj['spec'], { ports: [{ port: 80 }] }, 'scalar zeros are left to defaulting');

    const pod = builtinSchemaOf('', 'v1', 'Pod')!;
    const containers = deepFreezeJson([
      { name: 'c', image: 'i' },
      { name: 'd', image: 'i', resources: { limits: { cpu: '1' } } },
    ]);
    const p: Record<string, unknown> = { kind: 'Pod', metadata: { name: 'p' }, spec: { containers }, status: null };
    fillZeros(pod, p);
    const spec = p['spec'] as { containers: Array<Record<string, unknown>> };
    assert.deepEqual(spec.containers[0]!['resources'], {});
    assert.deepEqual(spec.containers[1]!['resources'], { limits: { cpu: '1' } });
    assert.notEqual(spec.containers, containers, 'the frozen list was copied');
    assert.equal(spec.containers[1], containers[1], 'an item with nothing to add is shared');
    assert.deepEqual(p['status'], {}, 'a null struct is written empty');
    const same = deepFreezeJson({ loadBalancer: {} });
    assert.equal(withZeros(builtinSchemaOf('', 'v1', 'Service')!.fields.get('status')!.node, same), same, 'nothing to add: the value itself');
  });
});
