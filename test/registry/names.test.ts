import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkName, maskTrailingDash, isConfigMapKey, isQualifiedName, isValidLabelValue, validateLabels, validateName } from '../../lib/registry/names.js';
import type { NameRule } from '../../lib/registry/types.js';
import type { KObject } from '../../lib/api/meta.js';

const long = (n: number) => 'a'.repeat(n);

const cases: Array<[NameRule, string, boolean]> = [
  ['subdomain', 'example.com', true],
  ['subdomain', 'my-config', true],
  ['subdomain', '123', true],
  ['subdomain', 'Upper', false],
  ['subdomain', '-lead', false],
  ['subdomain', 'trail-', false],
  ['subdomain', 'a..b', false],
  ['subdomain', 'under_score', false],
  ['subdomain', long(253), true],
  ['subdomain', long(254), false],
  ['label', 'kube-system', true],
  ['label', 'a.b', false],
  ['label', long(63), true],
  ['label', long(64), false],
  ['dns1035', 'my-svc', true],
  ['dns1035', '1svc', false],
  ['dns1035', 'svc.x', false],
  ['path-segment', 'system:node', true],
  ['path-segment', 'Any Name', true],
  ['path-segment', '.', false],
  ['path-segment', '..', false],
  ['path-segment', 'a/b', false],
  ['path-segment', '50%', false],
];

test('names are accepted or rejected per name rule', () => {
  for (const [rule, name, ok] of cases) {
    assert.equal(checkName(rule, name, false).length === 0, ok, `${rule} ${JSON.stringify(name)}`);
  }
});

test("a subdomain error uses apimachinery's exact message", () => {
  assert.deepEqual(checkName('subdomain', 'Bad_Name', false), [
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  ]);
});

test('a label error names two examples joined by or', () => {
  assert.deepEqual(checkName('label', 'a.b', false), [
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ]);
});

test('a too long name reports the length limit', () => {
  assert.deepEqual(checkName('label', long(64), false), ['must be no more than 63 characters']);
  assert.deepEqual(checkName('subdomain', long(254), false), ['must be no more than 253 characters']);
});

test('a generateName may end with a dash', () => {
  assert.deepEqual(checkName('subdomain', 'web-', true), []);
  assert.deepEqual(checkName('dns1035', 'svc-', true), []);
  assert.notDeepEqual(checkName('subdomain', 'web-', false), []);
});

test('a generateName is masked as kube masks it: the dash and the character before it become "a"', () => {
  assert.equal(maskTrailingDash('web-'), 'wea');
  assert.equal(maskTrailingDash('-'), '-');
  // Accepted by kube-apiserver, so accepted here: the character before the dash is not checked.
  assert.deepEqual(checkName('subdomain', 'web.-', true), []);
  assert.deepEqual(checkName('label', 'a_-', true), []);
  assert.deepEqual(checkName('subdomain', `${long(253)}-`, true), []);
  assert.deepEqual(checkName('subdomain', `${long(254)}-`, true), ['must be no more than 253 characters']);
  assert.notDeepEqual(checkName('subdomain', '-', true), []);
  assert.notDeepEqual(checkName('subdomain', 'Ab-', true), []);
  // kube's quirk, kept: "A-" masks to "a"; the name made from it ("A-xxxxx") is what fails, as metadata.name.
  assert.deepEqual(checkName('subdomain', 'A-', true), []);
});

test('an APIService name must be version dot group', () => {
  const obj: KObject = { metadata: { name: 'v1.example.com' }, spec: { group: 'example.com', version: 'v1' } };
  assert.deepEqual(checkName('apiservice', 'v1.example.com', false, obj), []);
  assert.deepEqual(checkName('apiservice', 'v1beta1.example.com', false, obj), ['must be `spec.version+"."+spec.group`: "v1.example.com"']);
});

test('metadata.name causes carry the field path and value', () => {
  assert.deepEqual(
    validateName('label', { metadata: { name: 'Bad' } }).map((c) => [c.field, c.reason]),
    [['metadata.name', 'FieldValueInvalid']],
  );
  assert.deepEqual(validateName('subdomain', { metadata: {} }), [
    { reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' },
  ]);
  const generated = validateName('subdomain', { metadata: { generateName: 'Bad-' } });
  assert.equal(generated[0]?.field, 'metadata.generateName');
});

test('label keys are qualified names with an optional prefix', () => {
  assert.deepEqual(isQualifiedName('app.kubernetes.io/name'), []);
  assert.deepEqual(isQualifiedName('MyName'), []);
  assert.deepEqual(isQualifiedName('/name'), ['prefix part must be non-empty']);
  assert.ok(isQualifiedName('a/b/c')[0]?.startsWith('a qualified name must consist of'));
  assert.deepEqual(isQualifiedName(long(64)), ['name part must be no more than 63 characters']);
  assert.ok(isQualifiedName('Bad_Prefix/name')[0]?.startsWith('prefix part a lowercase RFC 1123 subdomain'));
});

test('label values may be empty but not contain spaces', () => {
  assert.deepEqual(isValidLabelValue(''), []);
  assert.deepEqual(isValidLabelValue('v1.2_3'), []);
  assert.equal(isValidLabelValue('has space').length, 1);
  assert.deepEqual(isValidLabelValue(long(64)).slice(0, 1), ['must be no more than 63 characters']);
});

test('invalid labels are reported at metadata.labels', () => {
  const causes = validateLabels({ ok: 'fine', 'bad key': 'v', k: 'bad value' });
  assert.deepEqual(
    causes.map((c) => c.field),
    ['metadata.labels', 'metadata.labels'],
  );
});

test('config keys allow dots, dashes and underscores but not dot-dot prefixes', () => {
  assert.deepEqual(isConfigMapKey('app.properties'), []);
  assert.deepEqual(isConfigMapKey('KEY_NAME'), []);
  assert.deepEqual(isConfigMapKey('..data'), ["must not start with '..'"]);
  assert.deepEqual(isConfigMapKey('.'), ["must not be '.'"]);
  assert.equal(isConfigMapKey('a/b').length, 1);
});
