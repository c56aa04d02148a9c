// storedJson: the text a store writes and the text it answers, made from one
// serialization, must be exactly what JSON.stringify gives for each object.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KObject } from '../../lib/api/meta.js';
import { toJson } from '../../lib/api/json.js';
import { restamp, storedCopy, storedJson } from '../../backends/core/store/objects.js';

const cases: Record<string, KObject> = {
  configmap: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', labels: { a: 'b' } }, data: { 'x.y': 'line\n"quoted"\u2028é' } },
  'metadata first': { metadata: { name: 'm' }, kind: 'Thing', spec: { n: 1.5, list: [1, null, 'x'] } } as unknown as KObject,
  'metadata last': { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 's' } } as unknown as KObject,
  'empty metadata': { apiVersion: 'v1', kind: 'Thing', metadata: {}, spec: {} } as unknown as KObject,
  'integer-like keys': { '2': 'two', apiVersion: 'v1', '1': 'one', metadata: { '10': 'x', name: 'i' }, kind: 'Thing' } as unknown as KObject,
  'stale resourceVersion dropped': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { resourceVersion: '7', name: 'r', uid: 'u' }, data: {} },
};

describe('storedJson', () => {
  for (const [name, obj] of Object.entries(cases)) {
    it(`writes and stamps the text JSON.stringify gives (${name})`, () => {
      const stored = storedCopy(obj);
      const s = storedJson(stored);
      assert.equal(s.json, JSON.stringify(stored));
      for (const rev of [1, 42, 9_007_199_254_740_991]) {
        const out = s.stamp(rev);
        assert.deepEqual(out, restamp(stored, rev));
        assert.equal(out.metadata.resourceVersion, String(rev));
        assert.ok(Object.isFrozen(out) && Object.isFrozen(out.metadata));
        // toJson answers the remembered text; it must be the object's own JSON.
        assert.equal(toJson(out), JSON.stringify(out));
        assert.deepEqual(JSON.parse(toJson(out)), JSON.parse(JSON.stringify(out)));
      }
    });
  }
});
