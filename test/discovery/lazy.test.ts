// Discovery documents are built on first request, not all at a registry swap:
// with hundreds of CRDs, each CRD change swapped in a registry whose every
// group document was built at once. Counted by the registry reads a build makes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinRegistry, type Registry } from '../../lib/registry/index.js';
import { buildDiscovery } from '../../lib/discovery/index.js';
import type { ResourceType } from '../../lib/registry/types.js';

/** The built-ins plus `n` groups of one resource each, counting resourcesOf calls (one per group-version document). */
function counted(n: number): { registry: Registry; reads: () => number } {
  const base = builtinRegistry();
  const cm = base.lookup('', 'v1', 'configmaps')!;
  const added = Array.from(
    { length: n },
    (_, i) =>
      ({
        ...cm,
        group: `g${i}.example.com`,
        plural: `things${i}`,
        singular: `thing${i}`,
        kind: `Thing${i}`,
        listKind: `Thing${i}List`,
        shortNames: [],
      }) as ResourceType,
  );
  const real = base.extend(added);
  let reads = 0;
  // The registry is frozen: a proxy counts the reads (methods bound to the real one, whose private fields they use).
  const registry = new Proxy(real, {
    get(target, key) {
      const v = Reflect.get(target, key) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (key === 'resourcesOf') reads++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { registry, reads: () => reads };
}

test('a new registry builds no group document until one is asked for, then only that one, once', () => {
  const { registry, reads } = counted(300);
  const d = buildDiscovery(registry);
  assert.equal(reads(), 0);
  const doc = d.resources('g7.example.com', 'v1')!;
  assert.equal(reads(), 1);
  assert.equal(JSON.parse(doc.body).groupVersion, 'g7.example.com/v1');
  assert.equal(d.resources('g7.example.com', 'v1'), doc, 'built once');
  assert.equal(reads(), 1);
  assert.equal(d.resources('g7.example.com', 'v2'), undefined);
  assert.equal(d.group('nope.example.com'), undefined);
  assert.equal(JSON.parse(d.group('g7.example.com')!.body).name, 'g7.example.com');
});
