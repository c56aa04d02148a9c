import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type LabelRequirement,
  labelJsonCheck,
  labelSelectorFromObject,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from '../../lib/api/selectors.js';
import { goJson } from '../../lib/api/json.js';

const QNAME_DETAIL =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_DETAIL =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const req = (key: string, operator: LabelRequirement['operator'], values: string[] = []): LabelRequirement => ({ key, operator, values });

describe('parseLabelSelector: valid input', () => {
  const table: [string, LabelRequirement[]][] = [
    ['', []],
    ['   ', []],
    ['a=b', [req('a', '=', ['b'])]],
    ['a==b', [req('a', '==', ['b'])]],
    ['a!=b', [req('a', '!=', ['b'])]],
    ['a', [req('a', 'exists')]],
    ['!a', [req('a', '!')]],
    ['! a', [req('a', '!')]],
    ['a=', [req('a', '=', [''])]],
    ['a in (y,x,x)', [req('a', 'in', ['x', 'y'])]],
    ['a notin (x)', [req('a', 'notin', ['x'])]],
    ['a in ()', [req('a', 'in', [''])]],
    ['a in (,x)', [req('a', 'in', ['', 'x'])]],
    ['a in (x,)', [req('a', 'in', ['', 'x'])]],
    ['a in (x,,y)', [req('a', 'in', ['', 'x', 'y'])]],
    ['x in (in)', [req('x', 'in', ['in'])]],
    ['in=notin', [req('in', '=', ['notin'])]],
    ['a>1', [req('a', 'gt', ['1'])]],
    ['a < 10', [req('a', 'lt', ['10'])]],
    ['  z = 1 , a != 2 ,b\tin ( x , y ),!c  ', [req('a', '!=', ['2']), req('b', 'in', ['x', 'y']), req('c', '!'), req('z', '=', ['1'])]],
    ['example.com/app=web', [req('example.com/app', '=', ['web'])]],
    ['app.kubernetes.io/name in (nginx)', [req('app.kubernetes.io/name', 'in', ['nginx'])]],
  ];
  for (const [input, want] of table) {
    it(`parses ${JSON.stringify(input)}`, () => {
      assert.deepEqual(
        parseLabelSelector(input).requirements.map((r) => ({ ...r, values: [...r.values] })),
        want,
      );
    });
  }
});

describe('parseLabelSelector: invalid input', () => {
  const table: [string, string][] = [
    ['a,', "found '', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['=b', "found '=', expected: !, identifier, or 'end of string'"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['a in', "unable to parse requirement: found '' expected: '('"],
    ['a in x', "unable to parse requirement: found 'x' expected: '('"],
    ['a in (x', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (x y)', "unable to parse requirement: found 'y', expected: ',' or ')'"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a in (x,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['a in (x,', "unable to parse requirement: found '', expected: ',', or identifier"],
    ['a=(', "unable to parse requirement: found '(', expected: identifier"],
    ['a>b', `unable to parse requirement: values[0]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer`],
    ['a>', `unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`],
    ['A$=b', `unable to parse requirement: <nil>: Invalid value: "A$": ${QNAME_DETAIL}`],
    ['-a', `unable to parse requirement: <nil>: Invalid value: "-a": ${QNAME_DETAIL}`],
    [
      'a/b/c=d',
      `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ],
    ['/a', 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'],
    [
      'Example.com/a',
      `unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ],
    ['x.io/', `unable to parse requirement: <nil>: Invalid value: "x.io/": name part must be non-empty; ${QNAME_DETAIL}`],
    [`${'a'.repeat(64)}`, `unable to parse requirement: <nil>: Invalid value: "${'a'.repeat(64)}": name part must be no more than 63 characters`],
    ['a=b$', `unable to parse requirement: values[0][a]: Invalid value: "b$": ${VALUE_DETAIL}`],
    ['a in (x$,-y)', `unable to parse requirement: [values[0][a]: Invalid value: "-y": ${VALUE_DETAIL}, values[1][a]: Invalid value: "x$": ${VALUE_DETAIL}]`],
    [`a=${'v'.repeat(64)}`, `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`],
  ];
  for (const [input, message] of table) {
    it(`rejects ${JSON.stringify(input)}`, () => assert.throws(() => parseLabelSelector(input), { message }));
  }
});

describe('matchesLabels', () => {
  const labels = { app: 'web', tier: 'frontend', count: '5', empty: '' };
  const table: [string, boolean][] = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['missing=x', false],
    ['app!=db', true],
    ['app!=web', false],
    ['missing!=x', true],
    ['app in (db,web)', true],
    ['app in (db)', false],
    ['missing in (x)', false],
    ['app notin (db)', true],
    ['app notin (web,db)', false],
    ['missing notin (x)', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['empty=', true],
    ['empty in ()', true],
    ['empty', true],
    ['app=', false],
    ['count>4', true],
    ['count>5', false],
    ['count<6', true],
    ['app>1', false],
    ['missing<1', false],
    ['app=web,tier=frontend', true],
    ['app=web,tier=backend', false],
    ['constructor', false],
    ['!constructor', true],
    ['toString!=x', true],
  ];
  for (const [selector, want] of table) {
    it(`${JSON.stringify(selector)} ${want ? 'matches' : 'does not match'}`, () => {
      assert.equal(matchesLabels(parseLabelSelector(selector), labels), want);
    });
  }

  it('an empty selector matches objects without labels', () => {
    assert.equal(matchesLabels(parseLabelSelector(''), undefined), true);
    assert.equal(matchesLabels(parseLabelSelector('!a'), undefined), true);
    assert.equal(matchesLabels(parseLabelSelector('a'), {}), false);
  });

  it('a compiled selector is frozen and reusable', () => {
    const sel = parseLabelSelector('a in (1,2,3,4),b');
    assert.ok(Object.isFrozen(sel) && Object.isFrozen(sel.requirements));
    assert.equal(matchesLabels(sel, { a: '3', b: '' }), true);
    assert.equal(matchesLabels(sel, { a: '5', b: '' }), false);
  });
});

describe('labelSelectorFromObject', () => {
  it('null matches nothing and {} matches everything', () => {
    assert.equal(matchesLabels(labelSelectorFromObject(null), {}), false);
    assert.equal(matchesLabels(labelSelectorFromObject(undefined), { a: 'b' }), false);
    assert.equal(matchesLabels(labelSelectorFromObject({}), {}), true);
    assert.equal(matchesLabels(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }), { a: 'b' }), true);
  });

  it('combines matchLabels and matchExpressions', () => {
    const sel = labelSelectorFromObject({
      matchLabels: { 'rbac.example.com/aggregate-to-view': 'true' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'team', operator: 'Exists' },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
      ],
    });
    assert.equal(matchesLabels(sel, { 'rbac.example.com/aggregate-to-view': 'true', tier: 'a', team: 'x' }), true);
    assert.equal(matchesLabels(sel, { 'rbac.example.com/aggregate-to-view': 'true', tier: 'a', team: 'x', env: 'prod' }), false);
    assert.equal(matchesLabels(sel, { 'rbac.example.com/aggregate-to-view': 'true', tier: 'a', team: 'x', legacy: '' }), false);
    assert.equal(matchesLabels(sel, { tier: 'a', team: 'x' }), false);
  });

  const bad: [unknown, string][] = [
    [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, '"Gt" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'constructor' }] }, '"constructor" is not a valid label selector operator'],
    [
      { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
      "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x', 'y'] }] },
      'values: Invalid value: []string{"x", "y"}: values set must be empty for exists and does not exist',
    ],
    [{ matchLabels: { 'a b': 'x' } }, `key: Invalid value: "a b": ${QNAME_DETAIL}`],
    [{ matchLabels: { a: 'x y' } }, `values[0][a]: Invalid value: "x y": ${VALUE_DETAIL}`],
    [{ matchLabels: { a: 1 } }, 'invalid label selector: matchLabels["a"] must be a string'],
    [{ matchLabels: [] }, 'invalid label selector: matchLabels must be an object'],
    [{ matchExpressions: {} }, 'invalid label selector: matchExpressions must be a list'],
    [{ matchExpressions: [{ operator: 'In' }] }, 'invalid label selector: matchExpressions[0].key must be a string'],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: [1] }] }, 'invalid label selector: matchExpressions[0].values must be a list of strings'],
    ['a=b', 'invalid label selector: must be an object'],
  ];
  for (const [input, message] of bad) {
    it(`rejects ${JSON.stringify(input)}`, () => assert.throws(() => labelSelectorFromObject(input), { message }));
  }
});

describe('parseFieldSelector', () => {
  const good: [string, { field: string; operator: string; value: string }[]][] = [
    ['', []],
    ['metadata.name=foo', [{ field: 'metadata.name', operator: '=', value: 'foo' }]],
    ['metadata.name==foo', [{ field: 'metadata.name', operator: '=', value: 'foo' }]],
    ['status.phase!=Running', [{ field: 'status.phase', operator: '!=', value: 'Running' }]],
    ['spec.nodeName=', [{ field: 'spec.nodeName', operator: '=', value: '' }]],
    [
      'b=2,,a=1',
      [
        { field: 'a', operator: '=', value: '1' },
        { field: 'b', operator: '=', value: '2' },
      ],
    ],
    ['a=x\\,y\\=z\\\\', [{ field: 'a', operator: '=', value: 'x,y=z\\' }]],
    ['a!b=c', [{ field: 'a!b', operator: '=', value: 'c' }]],
    ['a= b', [{ field: 'a', operator: '=', value: ' b' }]],
  ];
  for (const [input, want] of good) {
    it(`parses ${JSON.stringify(input)}`, () =>
      assert.deepEqual(
        parseFieldSelector(input).map((r) => ({ ...r })),
        want,
      ));
  }

  const bad: [string, string][] = [
    ['foo', "invalid selector: 'foo'; can't understand 'foo'"],
    ['a=b,c', "invalid selector: 'a=b,c'; can't understand 'c'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a=x\\y', 'invalid field selector: invalid escape sequence: \\y'],
    ['a=x\\', 'invalid field selector: invalid escape sequence: \\'],
  ];
  for (const [input, message] of bad) {
    it(`rejects ${JSON.stringify(input)}`, () => assert.throws(() => parseFieldSelector(input), { message }));
  }
});

describe('labelJsonCheck', () => {
  const objectJson = (labels: Record<string, string>, data: Record<string, string> = {}) =>
    Buffer.from(goJson({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels }, data }) + ',');
  const labelSets: Record<string, string>[] = [
    {},
    { app: 'web' },
    { app: 'db', tier: 'back' },
    { 'example.com/app': 'web', tier: '' },
    { app: 'web', tier: 'front', n: '7' },
  ];
  const selectors = [
    'app=web',
    'app==web',
    'app in (db,web)',
    'app',
    'tier=',
    'example.com/app=web',
    'app=web,tier=front',
    'n>5',
    'n<9',
    'app!=web',
    '!app',
    'app notin (db)',
    'tier in (front),app',
  ];

  it('holds for every object the selector matches (a necessary condition), and refuses objects without the needed labels', () => {
    for (const text of selectors) {
      const sel = parseLabelSelector(text);
      const check = labelJsonCheck(sel);
      for (const labels of labelSets) {
        const json = objectJson(labels);
        if (matchesLabels(sel, labels)) assert.ok(check === undefined || check(json), `${text} on ${JSON.stringify(labels)}`);
      }
    }
    assert.equal(labelJsonCheck(parseLabelSelector('app=web'))!(objectJson({ app: 'db' })), false);
    assert.equal(labelJsonCheck(parseLabelSelector('app in (db,web)'))!(objectJson({ tier: 'web' })), false);
    assert.equal(labelJsonCheck(parseLabelSelector('app,tier=front'))!(objectJson({ app: 'x', tier: 'back' })), false);
    // The text may occur elsewhere in the object: then the object is parsed and the selector decides.
    assert.equal(labelJsonCheck(parseLabelSelector('app=web'))!(objectJson({}, { app: 'web' })), true);
  });

  it('is absent when no requirement needs a label', () => {
    assert.equal(labelJsonCheck(parseLabelSelector('app!=web')), undefined);
    assert.equal(labelJsonCheck(parseLabelSelector('!app,tier notin (a)')), undefined);
    assert.equal(labelJsonCheck(parseLabelSelector('')), undefined);
  });
});
