import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkName,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  maskTrailingDash,
  isConfigMapKey,
  isQualifiedName,
  isValidLabelValue,
  validateLabels,
  validateName,
} from '../../lib/registry/names.js';
import type { NameRule, ResourceType } from '../../lib/registry/types.js';
import { builtinRegistry } from '../../lib/registry/index.js';
import { prepareCreate, prepareUpdate } from '../../backends/core/objects.js';
import { StatusError } from '../../lib/api/status.js';
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
  assert.deepEqual(checkName('label', 'a_b', false), [
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

// kube's own edge cases (apimachinery pkg/util/validation/validation_test.go and
// pkg/api/validation/generic_test.go), every value with kube's verdict.
const KUBE_LABEL_GOOD = ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', '0', '01', '012', '1a', '1-a', '1--a--b--2', long(63)];
const KUBE_LABEL_BAD = [
  ...['', 'A', 'ABC', 'aBc', 'A1', 'A-1', '1-A', '-', 'a-', '-a', '1-', '-1', '_', 'a_', '_a', 'a_b', '1_', '_1', '1_2'],
  ...['.', 'a.', '.a', 'a.b', '1.', '.1', '1.2', ' ', 'a ', ' a', 'a b', '1 ', ' 1', '1 2', long(64)],
];
const KUBE_SUBDOMAIN_GOOD = [
  ...KUBE_LABEL_GOOD.slice(0, -1),
  ...['a.a', 'ab.a', 'abc.a', 'a1.a', 'a-1.a', 'a--1--2--b.a', 'a.1', 'ab.1', 'abc.1', 'a1.1', 'a-1.1', 'a--1--2--b.1'],
  ...['0.a', '01.a', '012.a', '1a.a', '1-a.a', '1--a--b--2', '0.1', '01.1', '012.1', '1a.1', '1-a.1', '1--a--b--2.1'],
  ...['a.b.c.d.e', 'aa.bb.cc.dd.ee', '1.2.3.4.5', '11.22.33.44.55', long(253)],
];
const KUBE_SUBDOMAIN_BAD = [
  ...['', 'A', 'ABC', 'aBc', 'A1', 'A-1', '1-A', '-', 'a-', '-a', '1-', '-1', '_', 'a_', '_a', 'a_b', '1_', '_1', '1_2'],
  ...['.', 'a.', '.a', 'a..b', '1.', '.1', '1..2', ' ', 'a ', ' a', 'a b', '1 ', ' 1', '1 2'],
  ...['A.a', 'aB.a', 'ab.A', 'A1.a', 'a1.A', 'A.1', 'aB.1', 'A1.1', '1A.1', '0.A', '01.A', '012.A', '1A.a', '1a.A'],
  ...['A.B.C.D.E', 'AA.BB.CC.DD.EE', 'a.B.c.d.e', 'aa.bB.cc.dd.ee', 'a@b', 'a,b', 'a_b', 'a;b', 'a:b', 'a%b', 'a?b', 'a$b', long(254)],
];
const KUBE_1035_GOOD = ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', long(63)];
const KUBE_1035_BAD = ['0', '01', '012', '1a', '1-a', '1--a--b--2', ...KUBE_LABEL_BAD];

test("kube's IsDNS1123Label, IsDNS1123Subdomain and IsDNS1035Label tables", () => {
  const table: Array<[string, (v: string) => string[], string[], string[]]> = [
    ['IsDNS1123Label', isDNS1123Label, KUBE_LABEL_GOOD, KUBE_LABEL_BAD],
    ['IsDNS1123Subdomain', isDNS1123Subdomain, KUBE_SUBDOMAIN_GOOD, KUBE_SUBDOMAIN_BAD],
    ['IsDNS1035Label', isDNS1035Label, KUBE_1035_GOOD, KUBE_1035_BAD],
  ];
  for (const [fn, check, good, bad] of table) {
    for (const v of good) assert.deepEqual(check(v), [], `${fn}(${JSON.stringify(v)})`);
    for (const v of bad) assert.notDeepEqual(check(v), [], `${fn}(${JSON.stringify(v)})`);
  }
});

test("kube's maskTrailingDash table", () => {
  for (const [before, after] of [
    ['', ''],
    ['-', '-'],
    ['-foo', '-foo'],
    ['-foo-', '-foa'],
    ['b-', 'a'],
    ['ab', 'ab'],
  ]) {
    assert.equal(maskTrailingDash(before!), after, JSON.stringify(before));
  }
});

test('a DNS label with dots is told so, as kube says it since 1.27', () => {
  assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
  assert.deepEqual(isDNS1123Label(`${long(62)}.b`), ['must be no more than 63 characters', 'must not contain dots']);
  // Not a subdomain either: the regex message.
  assert.match(isDNS1123Label('a..b')[0]!, /^a lowercase RFC 1123 label must consist of/);
  // A generateName is masked first: "a.b-" is checked as "a.a".
  assert.deepEqual(checkName('label', 'a.b-', true), ['must not contain dots']);
});

/** Each name function of kube (NameIsDNSSubdomain, NameIsDNSLabel, NameIsDNS1035Label, path segments), name and prefix. */
const NAME_FUNCTIONS: Array<[NameRule, string, boolean, boolean]> = [
  ['subdomain', 'a-', true, true],
  ['subdomain', 'a-', false, false],
  ['subdomain', 'a.-', true, true],
  ['subdomain', '-', true, false],
  ['subdomain', 'a.', true, false],
  ['subdomain', `${long(252)}-`, true, true],
  ['subdomain', `${long(254)}-`, true, false],
  ['label', 'ns-', true, true],
  ['label', 'a.b-', true, false],
  ['label', `${long(63)}-`, true, true],
  ['dns1035', 'svc-', true, true],
  ['dns1035', '1-', true, true], // kube's quirk: masked to "a"
  ['dns1035', '1a-', true, false],
  ['dns1035', 'a1-', true, true],
  ['path-segment', '.', true, true],
  ['path-segment', '..', true, true],
  ['path-segment', '.', false, false],
  ['path-segment', 'a/', true, false],
  ['path-segment', '%-', true, false],
];

test("each name rule checks a name and a generateName as kube's name function does", () => {
  for (const [rule, value, prefix, ok] of NAME_FUNCTIONS) {
    assert.equal(checkName(rule, value, prefix).length === 0, ok, `${rule} ${JSON.stringify(value)} prefix=${prefix}`);
  }
  // kube-aggregator checks an APIService's generateName as a whole path segment name.
  const svc: KObject = { metadata: {}, spec: { group: 'example.com', version: 'v1' } };
  assert.deepEqual(checkName('apiservice', '.', true, svc), ["may not be '.'"]);
});

test("ValidateObjectMeta: a bad generateName and the name made from it are both reported, each at kube's field", () => {
  const causes = validateName('label', { metadata: { generateName: 'Team.', name: 'Team.x7k2p' } });
  assert.deepEqual(
    causes.map((c) => [c.field, c.reason]),
    [
      ['metadata.generateName', 'FieldValueInvalid'],
      ['metadata.name', 'FieldValueInvalid'],
    ],
  );
  assert.deepEqual(validateName('label', { metadata: { generateName: 'team-', name: 'team-x7k2p' } }), []);
});

test('a create answers 422 naming the field as kube-apiserver does', () => {
  const reg = builtinRegistry();
  const refused = (t: ResourceType, obj: KObject) =>
    assert.throws(
      () => prepareCreate(t, obj, 0),
      (err: unknown) => err instanceof StatusError && err.status.code === 422 && err.message === err.status.message,
    );
  const namespaces = reg.lookup('', 'v1', 'namespaces')!;
  const cronjobs = reg.lookup('batch', 'v1', 'cronjobs')!;
  const message = (t: ResourceType, obj: KObject) => {
    try {
      prepareCreate(t, obj, 0);
    } catch (err) {
      return (err as StatusError).message;
    }
    return 'accepted';
  };
  refused(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team.a' } });
  assert.equal(
    message(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team.a' } }),
    'Namespace "team.a" is invalid: metadata.name: Invalid value: "team.a": must not contain dots',
  );
  const cron = (name: string): KObject => ({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: 'default' },
    spec: {
      schedule: '* * * * *',
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } },
    },
  });
  assert.equal(message(cronjobs, cron(long(52))), 'accepted');
  assert.equal(
    message(cronjobs, cron(long(53))),
    `CronJob.batch "${long(53)}" is invalid: metadata.name: Invalid value: "${long(53)}": must be no more than 52 characters`,
  );
});

test("a StatefulSet's name is a DNS label on create (its pods' hostnames), and is not checked again on update", () => {
  const statefulsets = builtinRegistry().lookup('apps', 'v1', 'statefulsets')!;
  const sts = (name: string): KObject => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'db' } },
      serviceName: 'db',
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  });
  assert.throws(
    () => prepareCreate(statefulsets, sts('db.v1'), 0),
    (err: unknown) =>
      err instanceof StatusError && err.message === 'StatefulSet.apps "db.v1" is invalid: metadata.name: Invalid value: "db.v1": must not contain dots',
  );
  const stored = prepareCreate(statefulsets, sts('db'), 0);
  // One stored before the rule (kube allowed subdomains once) can still be updated.
  const old: KObject = { ...stored, metadata: { ...stored.metadata, name: 'db.v1' } };
  const next: KObject = { ...old, metadata: { ...old.metadata }, spec: { ...(old['spec'] as object), replicas: 3 } };
  assert.doesNotThrow(() => prepareUpdate(statefulsets, next, old, 'main', undefined, 0));
});
