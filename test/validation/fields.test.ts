// Field validation: duplicate keys found while decoding (JSON and YAML), the
// structural check, and fieldValidation=Ignore|Warn|Strict on create and update.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJson, findDuplicates } from '../../lib/validation/json.js';
import { decodeYaml } from '../../lib/validation/yaml.js';
import { pruneAndValidate } from '../../lib/validation/structural.js';
import { builtinSchemaOf } from '../../lib/schema/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('duplicate keys', () => {
  it('finds none in a JSON text without repeats, on the fast path', () => {
    assert.deepEqual(decodeJson('{"a":{"b":[{"c":1},{"c":2}]},"s":"x:y"}').duplicates, []);
  });
  it('names repeated JSON keys with their paths', () => {
    assert.deepEqual(decodeJson('{"metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"x","name":"y"}]}}').duplicates, [
      'metadata.name',
      'spec.containers[0].name',
    ]);
  });
  it('is not fooled by colons, quotes and braces inside strings', () => {
    assert.deepEqual(findDuplicates('{"a":"{\\"b\\":1,\\"b\\":2}","c":"::"}'), []);
  });
  it('names repeated YAML keys with their paths', () => {
    assert.deepEqual(decodeYaml('metadata:\n  name: a\n  name: b\n').duplicates, ['metadata.name']);
  });
  it('refuses JSON nested deeper than the limit', () => {
    assert.throws(() => decodeJson('['.repeat(100) + ']'.repeat(100)), /deeper than/);
  });
});

describe('structural check', () => {
  const POD = builtinSchemaOf('', 'v1', 'Pod')!;
  it('drops unknown fields and reports their paths', () => {
    const obj = { metadata: { name: 'p', bogus: 1 }, spec: { containers: [{ name: 'a', extra: true }] } };
    const r = pruneAndValidate(obj, POD);
    assert.deepEqual(r.unknown, ['metadata.bogus', 'spec.containers[0].extra']);
    assert.deepEqual(r.causes, []);
    assert.deepEqual(obj, { metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }] } });
  });
  it('names wrong types and missing required fields', () => {
    const r = pruneAndValidate({ spec: { containers: [{ image: 'x', ports: [{ containerPort: 'http' }] }], restartPolicy: 3 } }, POD);
    assert.deepEqual(r.causes.map((c) => `${c.reason} ${c.field}`).sort(), [
      'FieldValueRequired spec.containers[0].name',
      'FieldValueTypeInvalid spec.containers[0].ports[0].containerPort',
      'FieldValueTypeInvalid spec.restartPolicy',
    ]);
  });
  it('accepts int-or-string and quantity in both forms', () => {
    const r = pruneAndValidate(
      { spec: { containers: [{ name: 'a', resources: { limits: { cpu: 1, memory: '1Gi' } }, livenessProbe: { httpGet: { port: 'http' } } }] } },
      POD,
    );
    assert.deepEqual(r.causes, []);
  });
});

describe('fieldValidation over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
  });
  after(async () => {
    await s.close();
  });
  const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"NAME","name":"NAME"},"data":{"a":"b"},"foo":1}';
  const post = (name: string, level?: string) =>
    s.admin.request('POST', `/api/v1/namespaces/default/configmaps${level ? `?fieldValidation=${level}` : ''}`, body.replaceAll('NAME', name));

  it('warns by default with one Warning header entry per field and drops them', async () => {
    const r = await post('fv-warn');
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers['warning'], '299 - "unknown field \\"foo\\"", 299 - "duplicate field \\"metadata.name\\""');
    assert.equal(r.json.foo, undefined);
  });
  it('drops them silently with Ignore', async () => {
    const r = await post('fv-ignore', 'Ignore');
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers['warning'], undefined);
  });
  it('refuses with 400 listing every field with Strict, and stores nothing', async () => {
    const r = await post('fv-strict', 'Strict');
    assert.equal(r.status, 400, r.text);
    assert.equal(
      r.json.message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "foo", duplicate field "metadata.name"',
    );
    assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps/fv-strict')).status, 404);
  });
  it('refuses an unknown fieldValidation value with 400', async () => {
    assert.equal((await post('fv-bad', 'Sometimes')).status, 400);
  });
  it('checks YAML bodies the same way', async () => {
    const r = await s.admin.request(
      'POST',
      '/api/v1/namespaces/default/configmaps?fieldValidation=Strict',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fv-yaml\ndata:\n  a: b\n  a: c\n',
      { 'content-type': 'application/yaml' },
    );
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.message, /duplicate field "data.a"/);
  });
  it('answers 422 naming each field of a wrong type, whatever the level', async () => {
    const r = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Ignore', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fv-type' },
      data: { a: 1 },
      immutable: 'yes',
    });
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.json.details.causes.map((c: { field: string }) => c.field).sort(), ['data.a', 'immutable']);
  });
});
