// The ownership graph keeps nodes only for objects the collector may act on
// (with references, or being deleted), yet still knows every key's uid: a
// replaced or removed owner without a node is reported by uid, so its
// dependents can be looked at again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnershipGraph } from '../../backends/core/controllers/garbagecollector-graph.js';
import type { KObject } from '../../lib/api/meta.js';
import type { ResourceType } from '../../lib/registry/types.js';

const t = { kind: 'ConfigMap' } as ResourceType;
const obj = (uid: string, meta: Record<string, unknown> = {}): KObject => ({ metadata: { name: uid, uid, ...meta } }) as KObject;
const ref = (uid: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: uid, uid });

describe('OwnershipGraph', () => {
  it('keeps nodes for dependents and objects being deleted only', () => {
    const g = new OwnershipGraph();
    g.upsert('k/owner', t, obj('owner'));
    g.upsert('k/dep', t, obj('dep', { ownerReferences: [ref('owner')] }));
    g.upsert('k/going', t, obj('going', { deletionTimestamp: '2026-11-30T00:00:00Z', finalizers: ['orphan'] }));
    assert.equal(g.get('owner'), undefined);
    assert.equal(g.get('dep')?.key, 'k/dep');
    assert.equal(g.get('going')?.key, 'k/going');
    assert.deepEqual(
      [...g.all()].map((n) => n.uid),
      ['dep', 'going'],
    );
    assert.deepEqual(g.keys().sort(), ['k/dep', 'k/going', 'k/owner']);
    assert.deepEqual(
      g.dependentsOf('owner').map((n) => n.uid),
      ['dep'],
    );
  });

  it('reports the uid a key had, with or without a node', () => {
    const g = new OwnershipGraph();
    assert.equal(g.upsert('k/a', t, obj('a1')), undefined);
    assert.equal(g.upsert('k/a', t, obj('a2', { ownerReferences: [ref('o')] })), 'a1');
    assert.equal(g.upsert('k/a', t, obj('a2')), 'a2');
    // Its references gone, it is no longer a node nor a dependent.
    assert.equal(g.get('a2'), undefined);
    assert.deepEqual(g.dependentsOf('o'), []);
    assert.deepEqual(g.remove('k/a'), { uid: 'a2', node: undefined });
    assert.equal(g.remove('k/a'), undefined);
    assert.deepEqual(g.keys(), []);
  });

  it('a removed dependent leaves its owner without it', () => {
    const g = new OwnershipGraph();
    g.upsert('k/d', t, obj('d', { ownerReferences: [ref('o')] }));
    const gone = g.remove('k/d');
    assert.equal(gone?.uid, 'd');
    assert.equal(gone?.node?.key, 'k/d');
    assert.deepEqual(g.dependentsOf('o'), []);
    assert.equal(g.get('d'), undefined);
  });
});
