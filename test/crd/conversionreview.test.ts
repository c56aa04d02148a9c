// lib/crd/conversionreview.ts alone: the review versions a CRD may ask for,
// and the answers kube's webhook converter refuses, word for word (the
// server-level cases are conversion.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { ConversionError, conversionRequest, convertedObjects, reviewVersionOf, type ReviewVersion } from '../../lib/crd/conversionreview.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const FROM = 'conv.example.com/v2, Kind=Gadget';
const original = (name: string): KObject => ({
  apiVersion: 'conv.example.com/v2',
  kind: 'Gadget',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '7', generation: 3, labels: { a: 'b' } },
  spec: { host: 'h', port: 1 },
});
const converted = (o: KObject, patch: Json = {}): Json => ({ ...structuredClone(o), apiVersion: 'conv.example.com/v1', spec: { hostPort: 'h:1' }, ...patch });
const answer = (objs: unknown[], over: Json = {}, version: ReviewVersion = 'v1'): Json => ({
  apiVersion: `apiextensions.k8s.io/${version}`,
  kind: 'ConversionReview',
  response: { uid: 'u1', result: { status: 'Success' }, convertedObjects: objs, ...over },
});
const run = (originals: KObject[], body: unknown, version: ReviewVersion = 'v1') =>
  convertedObjects(version, 'u1', 'conv.example.com/v1', originals, body, FROM);

test("the first review version this server speaks, in the CRD's order", () => {
  assert.equal(reviewVersionOf(['v2', 'v1beta1', 'v1']), 'v1beta1');
  assert.equal(reviewVersionOf(['v1', 'v1beta1']), 'v1');
  assert.equal(reviewVersionOf(['v2']), undefined);
  assert.deepEqual(conversionRequest('v1beta1', 'u1', 'g/v1', []), {
    kind: 'ConversionReview',
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    request: { uid: 'u1', desiredAPIVersion: 'g/v1', objects: [] },
  });
});

test("a good answer: the webhook's body, the original's metadata, the webhook's labels and annotations", () => {
  const o = original('a');
  const [out] = run(
    [o],
    answer([converted(o, { metadata: { ...o.metadata, generation: 99, resourceVersion: '1', labels: { c: 'd' }, annotations: { x: 'y' } } })]),
    'v1',
  );
  assert.deepEqual(out!.spec, { hostPort: 'h:1' });
  assert.equal(out!.apiVersion, 'conv.example.com/v1');
  assert.deepEqual(out!.metadata, { ...o.metadata, labels: { c: 'd' }, annotations: { x: 'y' } });
  const [dropped] = run([o], answer([converted(o, { metadata: { name: 'a', namespace: 'ns', uid: 'uid-a' } })]));
  assert.equal(dropped!.metadata.labels, undefined, 'labels the webhook removed are removed');
  const [beta] = run([o], answer([converted(o)], {}, 'v1beta1'), 'v1beta1');
  assert.equal(beta!.metadata.generation, 3);
});

const refusals: Array<[string, KObject[], unknown, string]> = [
  [
    'not a review of the version sent',
    [original('a')],
    answer([], {}, 'v1beta1'),
    `conversion webhook for ${FROM} returned invalid response: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1beta1, Kind=ConversionReview`,
  ],
  [
    'no response',
    [original('a')],
    { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' },
    `conversion webhook for ${FROM} returned invalid response: no response provided`,
  ],
  ['another uid', [original('a')], answer([], { uid: 'u2' }), `conversion webhook for ${FROM} returned invalid response: expected response.uid="u1", got "u2"`],
  [
    'Failure with a message',
    [original('a')],
    answer([], { result: { status: 'Failure', message: 'no' } }),
    `conversion webhook for ${FROM} returned invalid response: no`,
  ],
  ['too few for a list', [original('a'), original('b')], answer([converted(original('a'))]), `conversion webhook for ${FROM} returned 1 objects, expected 2`],
  ['none for one object', [original('a')], answer([]), `conversion webhook for ${FROM} failed, no objects returned`],
  [
    'another kind',
    [original('a')],
    answer([converted(original('a'), { kind: 'Widget' })]),
    `conversion webhook for ${FROM} returned invalid object at index 0: invalid kind (expected Gadget, received Widget)`,
  ],
  [
    'a list item of another version',
    [original('a'), original('b')],
    answer([converted(original('a')), converted(original('b'), { apiVersion: 'conv.example.com/v2' })]),
    `conversion webhook for ${FROM} returned invalid converted object at index 1: invalid groupVersion (expected conv.example.com/v1, received conv.example.com/v2)`,
  ],
  [
    'another namespace',
    [original('a')],
    answer([converted(original('a'), { metadata: { ...original('a').metadata, namespace: 'other' } })]),
    `conversion webhook for ${FROM} returned invalid object: must have the same namespace: ns != other`,
  ],
  [
    'another uid on the object',
    [original('a')],
    answer([converted(original('a'), { metadata: { ...original('a').metadata, uid: 'x' } })]),
    `conversion webhook for ${FROM} returned invalid object: must have the same UID: uid-a != x`,
  ],
  [
    'metadata not an object',
    [original('a')],
    answer([{ ...converted(original('a')), metadata: [] }]),
    `conversion webhook for ${FROM} returned invalid object: must have the same name: a != `,
  ],
  [
    'a label that is not a string',
    [original('a')],
    answer([converted(original('a'), { metadata: { ...original('a').metadata, labels: { n: 1 } } })]),
    `conversion webhook for ${FROM} returned invalid metadata: invalid metadata.labels[n]=1 of type int64 in converted object`,
  ],
  [
    'annotations of the wrong type',
    [original('a')],
    answer([converted(original('a'), { metadata: { ...original('a').metadata, annotations: 'x' } })]),
    `conversion webhook for ${FROM} returned invalid metadata: invalid metadata.annotations of type string in converted object`,
  ],
];
for (const [what, originals, body, message] of refusals) {
  test(`refuses an answer: ${what}`, () => {
    assert.throws(
      () => run(originals, body),
      (err: unknown) => err instanceof ConversionError && err.message === message,
    );
  });
}

test('an answer whose member is named __proto__ keeps it as data', () => {
  const o = original('a');
  const body = JSON.parse(JSON.stringify(answer([converted(o)])).replace('"spec":{', '"spec":{"__proto__":{"polluted":true},')) as Json;
  const [out] = run([o], body);
  assert.equal(Object.getPrototypeOf(out!['spec']), Object.prototype);
  assert.equal(({} as Json)['polluted'], undefined);
});
