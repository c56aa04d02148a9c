import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinRegistry } from '../../lib/registry/index.js';
import type { KObject } from '../../lib/api/meta.js';

const reg = builtinRegistry();
const configmaps = reg.lookup('', 'v1', 'configmaps')!;
const secrets = reg.lookup('', 'v1', 'secrets')!;
const pods = reg.lookup('', 'v1', 'pods')!;
const obj = (extra: Record<string, unknown>): KObject => ({ metadata: { name: 'x', namespace: 'default' }, ...extra });

test('configmap data values must be strings under valid keys', () => {
  assert.deepEqual(configmaps.validate!(obj({ data: { 'app.properties': 'a=b', KEY_NAME: '' } }), undefined), []);
  const causes = configmaps.validate!(obj({ data: { 'bad key': 'v', n: 5 } }), undefined);
  assert.deepEqual(
    causes.map((c) => [c.field, c.reason]),
    [
      ['data[bad key]', 'FieldValueInvalid'],
      ['data[n]', 'FieldValueTypeInvalid'],
    ],
  );
  assert.equal(
    causes[0]!.message,
    "Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
  );
});

test('a configmap key may not be in both data and binaryData', () => {
  const causes = configmaps.validate!(obj({ data: { a: 'x' }, binaryData: { a: 'eA==' } }), undefined);
  assert.deepEqual(
    causes.map((c) => c.field),
    ['data[a]', 'binaryData[a]'],
  );
});

test("binaryData's keys are checked against data's own keys, not its prototype's", () => {
  // `toString` and `constructor` are valid config keys; a plain object's prototype holds both.
  assert.deepEqual(configmaps.validate!(obj({ binaryData: { toString: 'eA==', constructor: 'eA==' } }), undefined), []);
  assert.deepEqual(configmaps.validate!(obj({ data: { a: 'x' }, binaryData: { toString: 'eA==' } }), undefined), []);
});

test('an immutable configmap keeps its data', () => {
  const old = obj({ immutable: true, data: { a: '1' } });
  assert.deepEqual(configmaps.validate!(obj({ immutable: true, data: { a: '1' } }), old), []);
  assert.deepEqual(
    configmaps.validate!(obj({ immutable: true, data: { a: '2' } }), old).map((c) => [c.field, c.message]),
    [['data', 'Forbidden: field is immutable when `immutable` is set']],
  );
});

test('secret data values must be base64 and are never echoed back', () => {
  assert.deepEqual(secrets.validate!(obj({ type: 'Opaque', data: { password: 'aHVudGVyMg==' } }), undefined), []);
  const causes = secrets.validate!(obj({ type: 'Opaque', data: { password: 'hunter2!', n: 1 } }), undefined);
  assert.deepEqual(
    causes.map((c) => c.field),
    ['data[password]', 'data[n]'],
  );
  for (const c of causes) assert.ok(!c.message?.includes('hunter2'), c.message);
  assert.match(causes[0]!.message!, /<secret contents redacted>.*illegal base64 data at input byte 7/);
});

test('well-known secret types require their keys', () => {
  const tls = secrets.validate!(obj({ type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==' } }), undefined);
  assert.deepEqual(
    tls.map((c) => [c.field, c.reason]),
    [['data[tls.key]', 'FieldValueRequired']],
  );
  const sa = secrets.validate!(obj({ type: 'kubernetes.io/service-account-token' }), undefined);
  assert.deepEqual(
    sa.map((c) => c.field),
    ['metadata.annotations[kubernetes.io/service-account.name]'],
  );
});

test('a secret type cannot change', () => {
  const causes = secrets.validate!(obj({ type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' } }), obj({ type: 'Opaque' }));
  assert.deepEqual(
    causes.map((c) => [c.field, c.message]),
    [['type', 'Invalid value: "kubernetes.io/tls": field is immutable']],
  );
});

test('a pod needs named containers with images', () => {
  assert.deepEqual(
    pods.validate!(obj({ spec: {} }), undefined).map((c) => c.field),
    ['spec.containers'],
  );
  assert.deepEqual(pods.validate!(obj({ spec: { containers: [{ name: 'app', image: 'nginx' }] } }), undefined), []);
  const causes = pods.validate!(obj({ spec: { containers: [{ name: 'app', image: 'nginx' }, { name: 'app' }, { image: 'x' }] } }), undefined);
  assert.deepEqual(
    causes.map((c) => [c.field, c.reason]),
    [
      ['spec.containers[1].name', 'FieldValueDuplicate'],
      ['spec.containers[1].image', 'FieldValueRequired'],
      ['spec.containers[2].name', 'FieldValueRequired'],
    ],
  );
});
