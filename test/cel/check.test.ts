// The gradual type checker on its own: type parameters, dyn matching every
// overload, comprehension variables and results, cel-go's rendering.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CelEnvironment, CelScalar } from '../../lib/cel/index.js';
import { DYN, INT, listOf, mapOf, STRING, formatType, type CelT } from '../../lib/cel/types.js';

const env = new CelEnvironment('check-test', { a: CelScalar.DYN, b: CelScalar.DYN });
const check = (expr: string, vars: Record<string, CelT>) => {
  const r = env.compile(expr).check(new Map(Object.entries(vars)));
  return r.problem ?? formatType(r.type);
};

test('result types from literals, operators, functions and comprehensions', () => {
  assert.equal(check('a + 1', { a: INT }), 'int');
  assert.equal(check('a.map(x, x.size())', { a: listOf(STRING) }), 'list(int)');
  assert.equal(check('a.filter(x, x > 1)', { a: listOf(INT) }), 'list(int)');
  assert.equal(check('a.map(k, a[k])', { a: mapOf(STRING, INT) }), 'list(int)');
  assert.equal(check('a.exists_one(x, x == 1)', { a: listOf(INT) }), 'bool');
  assert.equal(check('a.min()', { a: listOf(STRING) }), 'string');
  assert.equal(check("a ? 'x' : 'y'", { a: DYN }), 'string');
  assert.equal(check('{"k": 1}', {}), 'map(string, int)');
  assert.equal(check("quantity('1Gi').add(1)", {}), 'kubernetes.Quantity');
});

test('dyn matches every overload: nothing that could evaluate is refused', () => {
  assert.equal(check('a > 1 && a.startsWith("x") && size(a) > 0 && a.b.c == a[0]', { a: DYN }), 'bool');
  assert.equal(check('a.all(x, x.y > 1)', { a: DYN }), 'bool');
  assert.equal(check('a == b', { a: INT, b: DYN }), 'bool');
});

test("mismatches are reported in cel-go's words, at the node, with the line and a caret", () => {
  assert.equal(check('a == "x"', { a: INT }), "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, string)'\n | a == \"x\"\n | ..^");
  assert.equal(
    check('a.indexOf(1) > 0', { a: listOf(STRING) }),
    "ERROR: <input>:1:10: found no matching overload for 'indexOf' applied to 'list(string).(int)'\n | a.indexOf(1) > 0\n | .........^",
  );
  assert.equal(
    check('true &&\n  a.all(x, x)', { a: INT }),
    "ERROR: <input>:2:3: expression of type 'int' cannot be the range of a comprehension (must be list, map, or dynamic)\n |   a.all(x, x)\n | ..^",
  );
});

test('every problem of an expression is reported, sorted by position, as cel-go shows them; no cascade from an errored node', () => {
  assert.equal(
    check('a + "x" == 1 && b - 1 == "y"', { a: INT, b: STRING }),
    [
      'ERROR: <input>:1:3: found no matching overload for \'_+_\' applied to \'(int, string)\'\n | a + "x" == 1 && b - 1 == "y"\n | ..^',
      'ERROR: <input>:1:19: found no matching overload for \'_-_\' applied to \'(string, int)\'\n | a + "x" == 1 && b - 1 == "y"\n | ..................^',
    ].join('\n'),
  );
});
