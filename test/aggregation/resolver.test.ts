// resolver.ts: one rotation per service reference by value, whichever ref object asks (an APIService's update
// hands out a new frozen ref), answers recomputed when an informer's generation moves, refs that are not frozen
// resolved by value every time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceResolver } from '../../gateway/aggregation/resolver.js';
import type { Informer } from '../../gateway/aggregation/informer.js';
import type { KObject } from '../../lib/api/meta.js';

interface FakeInformer {
  generation: number;
  items: KObject[];
}

/** An informer holding `items` by namespace/name; `generation` is bumped by hand. */
function informer(items: KObject[]): Informer & FakeInformer {
  const inf: FakeInformer = { generation: 0, items };
  return Object.assign(inf, {
    get: (namespace: string, name: string) => inf.items.find((o) => o.metadata.namespace === namespace && o.metadata.name === name),
    list: (namespace?: string) => inf.items.filter((o) => namespace === undefined || o.metadata.namespace === namespace),
  }) as unknown as Informer & FakeInformer;
}

const service = { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'ns', name: 'api' }, spec: { ports: [{ name: 'https', port: 443 }] } } as KObject;
const slice = (addresses: string[]): KObject =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: 'ns', name: 'api-1', labels: { 'kubernetes.io/service-name': 'api' } },
    ports: [{ name: 'https', port: 8443 }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  }) as unknown as KObject;

const hostOf = (t: ReturnType<ServiceResolver['pick']>): string => ('host' in t ? t.host : t.reason);

describe('ServiceResolver', () => {
  it('rotates once per service, whichever equal ref asks, and follows the informers', () => {
    const slices = informer([slice(['10.0.0.1', '10.0.0.2'])]);
    const r = new ServiceResolver(informer([service]), slices, informer([]));
    const a = Object.freeze({ namespace: 'ns', name: 'api', port: 443 });
    const b = Object.freeze({ namespace: 'ns', name: 'api', port: 443 });
    assert.deepEqual([r.pick(a), r.pick(b), r.pick(a), r.pick(b)].map(hostOf), ['10.0.0.1', '10.0.0.2', '10.0.0.1', '10.0.0.2']);
    // A ref that is not frozen is looked up by value each time, in the same rotation.
    assert.equal(hostOf(r.pick({ namespace: 'ns', name: 'api', port: 443 })), '10.0.0.1');
    slices.items = [slice(['10.0.0.3'])];
    // The informer did not move: the remembered answer stands.
    assert.equal(hostOf(r.pick(a)), '10.0.0.2');
    slices.generation++;
    assert.deepEqual([r.pick(a), r.pick(b)].map(hostOf), ['10.0.0.3', '10.0.0.3']);
    slices.items = [];
    slices.generation++;
    assert.equal(hostOf(r.pick(b)), 'MissingEndpoints');
    assert.equal(hostOf(r.pick(Object.freeze({ namespace: 'ns', name: 'other', port: 443 }))), 'ServiceNotFound');
  });
});
