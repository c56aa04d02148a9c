// kube's key order from the schema tables alone (lib/schema/keyorder.ts): Go's
// field order for built-in kinds (TypeMeta's kind and apiVersion first,
// ObjectMeta's fields as declared), map keys in encoding/json's byte order,
// unstructured objects sorted all the way down; an object already in order
// comes back as itself, and nothing handed in is written into.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { builtinSchemaOf, builtinSchemas } from '../../lib/schema/index.js';
import { compareGoKeys, inSortedOrder, inStructOrder, withResourceVersionSlot } from '../../lib/schema/keyorder.js';
import { deepFreezeJson } from '../../lib/api/json.js';

const pod = builtinSchemaOf('', 'v1', 'Pod')!;
const objectMeta = builtinSchemas().struct('meta.ObjectMeta')!;

describe("kube's key order", () => {
  it('orders a built-in object as Go encodes its struct, map keys sorted, list items walked', () => {
    const scrambled = JSON.parse(
      '{"status":{"qosClass":"BestEffort","phase":"Pending"},"spec":{"schedulerName":"s","containers":[{"resources":{},"image":"nginx","name":"c"}],"nodeSelector":{"zone":"a","disk":"ssd"}},' +
        '"metadata":{"labels":{"b":"2","a":"1"},"creationTimestamp":"2026-01-01T00:00:00Z","uid":"u","namespace":"n","name":"p"},"apiVersion":"v1","kind":"Pod"}',
    );
    assert.equal(
      JSON.stringify(inStructOrder(pod, deepFreezeJson(scrambled))),
      '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"n","uid":"u","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"a":"1","b":"2"}},' +
        '"spec":{"containers":[{"name":"c","image":"nginx","resources":{}}],"nodeSelector":{"disk":"ssd","zone":"a"},"schedulerName":"s"},"status":{"phase":"Pending","qosClass":"BestEffort"}}',
    );
  });

  it('returns an object already in order as itself, and shares the parts that were', () => {
    const ordered = deepFreezeJson({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p', labels: { a: '1', b: '2' } },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    assert.equal(inStructOrder(pod, ordered), ordered);
    const partly = deepFreezeJson({ kind: 'Pod', apiVersion: 'v1', metadata: { labels: { b: '2', a: '1' }, name: 'p' }, spec: ordered.spec });
    const out = inStructOrder(pod, partly);
    assert.notEqual(out, partly);
    assert.equal(out.spec, ordered.spec, 'an ordered part is shared, not copied');
    assert.deepEqual(Object.keys(out.metadata), ['name', 'labels']);
    assert.deepEqual(Object.keys(partly.metadata), ['labels', 'name'], 'the input is untouched');
  });

  it('keeps RawExtension and FieldsV1 as written, and puts members the schema does not name last', () => {
    const managed = { fieldsV1: { 'f:spec': {}, 'f:metadata': {} }, manager: 'm', time: 't', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1' };
    const out = inStructOrder(pod, { extra: 1, metadata: { managedFields: [managed], name: 'p' }, kind: 'Pod' } as Record<string, unknown>) as Record<
      string,
      any
    >;
    assert.deepEqual(Object.keys(out), ['kind', 'metadata', 'extra']);
    assert.deepEqual(Object.keys(out.metadata.managedFields[0]), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
    assert.deepEqual(Object.keys(out.metadata.managedFields[0].fieldsV1), ['f:spec', 'f:metadata'], 'FieldsV1 is raw JSON to Go');
  });

  it('sorts map keys in Go byte order (code points), with a __proto__ key kept as data', () => {
    const data = JSON.parse('{"b":"1","__proto__":"p","a":"2","A":"3","\uffff":"4","\ud83d\ude00":"5"}') as Record<string, string>;
    const cm = builtinSchemaOf('', 'v1', 'ConfigMap')!;
    const out = inStructOrder(cm, { kind: 'ConfigMap', data }) as Record<string, any>;
    assert.deepEqual(Object.keys(out.data), ['A', '__proto__', 'a', 'b', '\uffff', '\ud83d\ude00']);
    assert.equal(Object.getPrototypeOf(out.data), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(out.data, '__proto__')?.value, 'p');
    assert.ok(compareGoKeys('\ud83d\ude00', '\uffff') > 0, 'U+1F600 sorts after U+FFFF in UTF-8');
    assert.ok(compareGoKeys('a', 'ab') < 0);
    assert.equal(compareGoKeys('x', 'x'), 0);
  });

  it('sorts an unstructured object (a custom resource) at every level, arrays kept in order', () => {
    const cr = deepFreezeJson({
      spec: { z: [{ b: 1, a: 2 }], a: null },
      metadata: { uid: 'u', name: 'n', creationTimestamp: 't' },
      kind: 'K',
      apiVersion: 'x/v1',
    });
    assert.equal(
      JSON.stringify(inSortedOrder(cr)),
      '{"apiVersion":"x/v1","kind":"K","metadata":{"creationTimestamp":"t","name":"n","uid":"u"},"spec":{"a":null,"z":[{"a":2,"b":1}]}}',
    );
    const sorted = deepFreezeJson({ a: { b: 1, c: [1, { d: 1, e: 2 }] } });
    assert.equal(inSortedOrder(sorted), sorted);
  });

  it("gives metadata the resourceVersion member where kube's order puts it", () => {
    const built = withResourceVersionSlot({ name: 'n', namespace: 'ns', uid: 'u', generation: 1, creationTimestamp: 't' }, objectMeta);
    assert.deepEqual(Object.keys(built), ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp']);
    const sorted = withResourceVersionSlot({ creationTimestamp: 't', generation: 1, name: 'n', uid: 'u' }, undefined);
    assert.deepEqual(Object.keys(sorted), ['creationTimestamp', 'generation', 'name', 'resourceVersion', 'uid']);
    const has = { resourceVersion: '5', name: 'n' };
    assert.equal(withResourceVersionSlot(has, objectMeta), has);
  });
});
