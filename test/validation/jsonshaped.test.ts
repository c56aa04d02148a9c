// YAML bodies that are plain JSON take the JSON decoder; the result must be
// exactly the YAML decoder's, and everything else must still go to YAML.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeValue } from '../../lib/validation/decode.js';
import { decodeYaml } from '../../lib/validation/yaml.js';
import { StatusError } from '../../lib/api/status.js';

const bodies = [
  '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"b"}},"data":{"k":"v","n":"1"}}',
  '  {"a": [1, 2.5, -3e2, true, false, null, "x\\u00e9\\n\\/"], "b": {"c": {}}, "d": []}\n',
  '{"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}]}]}}',
];

test('a JSON-shaped YAML body decodes exactly as the YAML decoder decodes it', () => {
  for (const b of bodies) {
    assert.deepEqual(decodeValue(b, 'yaml'), decodeYaml(b), b);
  }
});

test('duplicate keys in a JSON-shaped YAML body are reported as the YAML decoder reports them', () => {
  const b = '{"metadata":{"name":"a","name":"b"}}';
  assert.deepEqual(decodeValue(b, 'yaml').duplicates, decodeYaml(b).duplicates);
  assert.ok(decodeValue(b, 'yaml').duplicates.length > 0);
});

test('YAML that is not JSON, and invalid JSON, still go through the YAML decoder', () => {
  assert.deepEqual(decodeValue('a: 1\nb: [x, y]\n', 'yaml').value, { a: 1, b: ['x', 'y'] });
  assert.deepEqual(decodeValue('{a: 1}', 'yaml').value, { a: 1 });
  assert.throws(
    () => decodeValue('{"a": [1,}', 'yaml'),
    (e: unknown) => e instanceof StatusError && e.code === 400 && /not valid YAML/.test(e.message),
  );
});
