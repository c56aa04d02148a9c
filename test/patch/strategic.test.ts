// Strategic merge patch over the Pod and ConfigMap schemas: merge keys,
// directives and ordering as apimachinery's strategicpatch applies them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { strategicMergePatch } from '../../lib/patch/strategic.js';
import { PatchError } from '../../lib/patch/errors.js';
import { builtinSchemaOf } from '../../lib/schema/index.js';

const POD = builtinSchemaOf('', 'v1', 'Pod')!;
const pod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'p' }) => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });
const smp = (orig: Record<string, unknown>, patch: Record<string, unknown>) => strategicMergePatch(orig, patch, POD);
const names = (o: Record<string, unknown>) => (o['spec'] as { containers: Array<{ name: string }> }).containers.map((c) => c.name);

describe('strategic merge patch', () => {
  it('merges containers by name and keeps the others', () => {
    const out = smp(
      pod({
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y' },
        ],
      }),
      { spec: { containers: [{ name: 'b', image: 'z' }] } },
    );
    assert.deepEqual((out['spec'] as Record<string, unknown>)['containers'], [
      { name: 'a', image: 'x' },
      { name: 'b', image: 'z' },
    ]);
  });
  it('puts a container with a new name first, as apimachinery orders patch items before server-only ones', () => {
    const out = smp(pod({ containers: [{ name: 'a', image: 'x' }] }), { spec: { containers: [{ name: 'c', image: 'q' }] } });
    assert.deepEqual(names(out), ['c', 'a']);
  });
  it('deletes a container with $patch: delete', () => {
    const out = smp(pod({ containers: [{ name: 'a' }, { name: 'b' }] }), { spec: { containers: [{ name: 'a', $patch: 'delete' }] } });
    assert.deepEqual(names(out), ['b']);
  });
  it('replaces a list with $patch: replace', () => {
    const out = smp(pod({ containers: [{ name: 'a' }, { name: 'b' }] }), { spec: { containers: [{ name: 'z' }, { $patch: 'replace' }] } });
    assert.deepEqual(names(out), ['z']);
  });
  it('replaces a map with $patch: replace and empties it with $patch: delete', () => {
    const orig = pod({ containers: [] }, { name: 'p', labels: { a: '1', b: '2' } });
    assert.deepEqual((smp(orig, { metadata: { labels: { c: '3', $patch: 'replace' } } })['metadata'] as Record<string, unknown>)['labels'], { c: '3' });
    assert.deepEqual((smp(orig, { metadata: { labels: { $patch: 'delete' } } })['metadata'] as Record<string, unknown>)['labels'], {});
  });
  it('removes a key set to null and leaves unmatched nulls out', () => {
    const out = smp(pod({ containers: [] }, { name: 'p', labels: { a: '1', b: '2' } }), { metadata: { labels: { a: null, z: null } } });
    assert.deepEqual((out['metadata'] as Record<string, unknown>)['labels'], { b: '2' });
  });
  it('merges a primitive list with merge strategy as a set and deletes with $deleteFromPrimitiveList', () => {
    const orig = pod({ containers: [] }, { name: 'p', finalizers: ['a', 'b'] });
    assert.deepEqual((smp(orig, { metadata: { finalizers: ['b', 'c'] } })['metadata'] as Record<string, unknown>)['finalizers'], ['a', 'b', 'c']);
    assert.deepEqual((smp(orig, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } })['metadata'] as Record<string, unknown>)['finalizers'], ['b']);
  });
  it('replaces a primitive list without a merge strategy', () => {
    const out = smp(pod({ containers: [{ name: 'a', args: ['1', '2'] }] }), { spec: { containers: [{ name: 'a', args: ['3'] }] } });
    assert.deepEqual(((out['spec'] as Record<string, unknown>)['containers'] as Array<Record<string, unknown>>)[0]!['args'], ['3']);
  });
  it('orders a merged list by $setElementOrder', () => {
    const orig = pod({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const out = smp(orig, {
      spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }], containers: [{ name: 'a', image: 'new' }] },
    });
    assert.deepEqual(names(out), ['c', 'a', 'b']);
  });
  it('keeps only the listed keys with $retainKeys', () => {
    const orig = pod({ containers: [], volumes: [{ name: 'v', emptyDir: {} }] });
    const out = smp(orig, { spec: { volumes: [{ name: 'v', hostPath: { path: '/x' }, $retainKeys: ['name', 'hostPath'] }] } });
    assert.deepEqual((out['spec'] as Record<string, unknown>)['volumes'], [{ name: 'v', hostPath: { path: '/x' } }]);
  });
  it('refuses a $retainKeys list that leaves out a key the patch sets', () => {
    const orig = pod({ containers: [], volumes: [{ name: 'v', emptyDir: {} }] });
    assert.throws(
      () => smp(orig, { spec: { volumes: [{ name: 'v', hostPath: { path: '/x' }, $retainKeys: ['name'] }] } }),
      (e: unknown) => e instanceof PatchError && e.code === 'malformed',
    );
  });
  it('refuses a merge list item without its merge key', () => {
    assert.throws(
      () => smp(pod({ containers: [{ name: 'a' }] }), { spec: { containers: [{ image: 'x' }] } }),
      (e: unknown) => e instanceof PatchError && e.code === 'failed',
    );
  });
  it('merges the env of a container by name, nested two lists deep', () => {
    const orig = pod({
      containers: [
        {
          name: 'a',
          env: [
            { name: 'X', value: '1' },
            { name: 'Y', value: '2' },
          ],
        },
      ],
    });
    const out = smp(orig, { spec: { containers: [{ name: 'a', env: [{ name: 'Y', value: '3' }] }] } });
    assert.deepEqual(((out['spec'] as Record<string, unknown>)['containers'] as Array<Record<string, unknown>>)[0]!['env'], [
      { name: 'X', value: '1' },
      { name: 'Y', value: '3' },
    ]);
  });
  it('strips directives from values new to the object', () => {
    const out = smp(pod({}), { spec: { containers: [{ name: 'a', '$setElementOrder/env': [{ name: 'E' }], env: [{ name: 'E', value: 'v' }] }] } });
    assert.deepEqual((out['spec'] as Record<string, unknown>)['containers'], [{ name: 'a', env: [{ name: 'E', value: 'v' }] }]);
  });
  it('leaves the original object unchanged', () => {
    const orig = Object.freeze(pod({ containers: [{ name: 'a' }] }));
    smp(orig, { spec: { containers: [{ name: 'a', image: 'x' }] } });
    assert.deepEqual(orig.spec, { containers: [{ name: 'a' }] });
  });
});
