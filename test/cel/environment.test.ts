import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CelCompileError,
  CelEnvironment,
  CelEvalError,
  CelScalar,
  claimsEnvironment,
  fromJson,
  mapType,
  stringList,
  userEnvironment,
} from '../../lib/cel/index.js';

const claims = fromJson({ sub: 'alice', email: 'alice@example.com', email_verified: true, groups: ['dev', 'ops'], age: 42, nested: { team: 'x' } });
const run = (expr: string): unknown => claimsEnvironment.compile(expr).evaluate({ claims });

test('an expression over claims reads strings, numbers, lists and nested maps', () => {
  assert.equal(run("claims.sub + ':' + claims.nested.team"), 'alice:x');
  assert.equal(run('claims.age > 40'), true);
  assert.equal(run("claims.groups.exists(g, g == 'ops')"), true);
  assert.deepEqual(stringList(run("claims.groups.map(g, 'oidc:' + g)") as never), ['oidc:dev', 'oidc:ops']);
  assert.equal(run('has(claims.email) && claims.email_verified'), true);
  assert.equal(run('has(claims.missing)'), false);
});

test('the extended strings library is available', () => {
  assert.equal(run("claims.email.split('@')[1]"), 'example.com');
  assert.equal(run('claims.sub.upperAscii()'), 'ALICE');
  assert.equal(run("claims.groups.join(',')"), 'dev,ops');
  assert.equal(run("'  x '.trim()"), 'x');
  assert.equal(run("claims.email.indexOf('@')"), 5n);
  assert.equal(run('claims.email.substring(0, 5)'), 'alice');
  assert.equal(run("claims.sub.replace('a', 'A')"), 'Alice');
  assert.equal(run('claims.sub.charAt(0)'), 'a');
});

test('the list library and regex matching are available', () => {
  assert.equal(run('[3, 1, 2].max()'), 3n);
  assert.equal(run('[3, 1, 2].min()'), 1n);
  assert.equal(run('[1, 2, 3].sum()'), 6n);
  assert.equal(run('[1, 2, 3].isSorted()'), true);
  assert.equal(run("claims.groups.indexOf('ops')"), 1n);
  assert.equal(run("['a', 'b', 'a'].lastIndexOf('a')"), 2n);
  assert.equal(run("claims.email.matches('^[a-z]+@example[.]com$')"), true);
  assert.equal(run("isURL('https://example.com/x')"), true);
  assert.equal(run("isURL('not a url')"), false);
});

test('the same expression compiles once and is cached', () => {
  const a = claimsEnvironment.compile('claims.sub == "alice"');
  const b = claimsEnvironment.compile('claims.sub == "alice"');
  assert.equal(a, b);
  assert.equal(a.evaluate({ claims }), true);
  assert.equal(a.evaluate({ claims: fromJson({ sub: 'bob' }) }), false);
});

test('a syntax error is a compile error naming the expression', () => {
  assert.throws(
    () => claimsEnvironment.compile('claims.sub ==='),
    (err: unknown) => {
      assert.ok(err instanceof CelCompileError);
      assert.equal(err.code, 'syntax');
      assert.match(err.message, /^compilation failed for expression "claims\.sub ===": /);
      return true;
    },
  );
});

test('an undeclared variable or function is a compile error', () => {
  assert.throws(() => claimsEnvironment.compile('claim.sub'), /compilation failed for expression "claim\.sub": undeclared reference to "claim"/);
  assert.throws(() => claimsEnvironment.compile('user.username'), /undeclared reference to "user"/);
  assert.throws(() => claimsEnvironment.compile('claims.sub.frobnicate()'), /undeclared reference to function "frobnicate"/);
  assert.equal(userEnvironment.compile("user.username.startsWith('x')").evaluate({ user: new Map([['username', 'xy']]) }), true);
});

test('comprehension variables are in scope only inside their loop', () => {
  assert.doesNotThrow(() => claimsEnvironment.compile('claims.groups.all(g, g.size() > 0)'));
  assert.throws(() => claimsEnvironment.compile('claims.groups.all(g, true) && g == "x"'), /undeclared reference to "g"/);
});

test('an empty or oversized expression is refused at compile time', () => {
  assert.throws(() => claimsEnvironment.compile('  '), /expression is empty/);
  const env = new CelEnvironment('small', { x: CelScalar.INT }, { maxExpressionLength: 20 });
  assert.throws(
    () => env.compile('x + x + x + x + x + x + x'),
    (err: unknown) => err instanceof CelCompileError && err.code === 'too-large',
  );
  assert.throws(() => claimsEnvironment.compile(`${'('.repeat(5000)}1${')'.repeat(5000)}`), CelCompileError);
});

test('an evaluation error names the expression', () => {
  assert.throws(
    () => run('claims.nope == "x"'),
    (err: unknown) => {
      assert.ok(err instanceof CelEvalError);
      assert.match(err.message, /^evaluation of expression "claims\.nope == \\"x\\"" failed: /);
      return true;
    },
  );
});

test('a missing variable binding is an evaluation error, not a crash', () => {
  assert.throws(() => claimsEnvironment.compile('claims.sub').evaluate({}), /variable "claims" has no value/);
});

test('nested loops over a large list are stopped by the cost bound', () => {
  const big = fromJson({ l: Array.from({ length: 3000 }, (_, i) => `g${i}`) });
  const expr = claimsEnvironment.compile('claims.l.all(a, claims.l.all(b, claims.l.all(c, a != "" || b != c)))');
  assert.throws(
    () => expr.evaluate({ claims: big }),
    (err: unknown) => err instanceof CelEvalError && err.code === 'cost',
  );
  assert.throws(() => expr.evaluate({ claims: big }, { maxCost: 1000, timeoutMs: 10_000 }), /operation cancelled: actual cost limit exceeded/);
});

test('the cost bound holds even when the loop error would be absorbed by a logical or', () => {
  const big = fromJson({ l: Array.from({ length: 2000 }, (_, i) => i) });
  const expr = claimsEnvironment.compile('true || claims.l.exists(a, claims.l.exists(b, a == b + 100000))');
  assert.equal(expr.evaluate({ claims: big }), true); // short-circuit: no loop runs
  const expr2 = claimsEnvironment.compile('claims.l.exists(a, claims.l.exists(b, a == b + 100000)) || true');
  assert.throws(() => expr2.evaluate({ claims: big }, { maxCost: 10_000, timeoutMs: 60_000 }), /actual cost limit exceeded/);
});

test('an environment declares its own typed variables', () => {
  const env = new CelEnvironment('request', { request: mapType(CelScalar.STRING, CelScalar.DYN), n: CelScalar.INT });
  assert.equal(env.compile("request.verb == 'get' && n > 1").evaluate({ request: new Map([['verb', 'get']]), n: 2n }), true);
  assert.throws(() => env.compile('claims.sub'), /undeclared reference to "claims"/);
});

test('an expression tells which claims it reads', () => {
  const e = claimsEnvironment.compile("claims.email_verified ? claims['email'] : ''");
  assert.equal(e.reads('claims', 'email'), true);
  assert.equal(e.reads('claims', 'email_verified'), true);
  assert.equal(e.reads('claims', 'sub'), false);
});

test("cost is counted in cel-go's runtime units: 1 a node, strings and lists by size", () => {
  const cost = (expr: string, claims: unknown) => {
    const stats = { cost: 0 };
    claimsEnvironment.compile(expr).evaluate({ claims: fromJson(claims) }, undefined, stats);
    return stats.cost;
  };
  assert.equal(cost("'x' + 'y' == 'xy'", {}), 2); // two calls on short strings, constants free
  // claims.s twice (ident + select: 2 each), concatenation 0.1 per character of both operands.
  assert.equal(cost('claims.s + claims.s != ""', { s: 'a'.repeat(100) }), 2 + 2 + 20 + 0);
  // matches: ceil(0.1 × (1 + string length)) × ceil(0.25 × regex length).
  assert.equal(cost("claims.s.matches('^a+$')", { s: 'a'.repeat(1000) }), 2 + 101 * 1);
  assert.equal(cost("claims.s.matches('^a+b*c?d{0,3}$')", { s: 'a'.repeat(1000) }), 2 + 101 * 4);
  // all(): the range and the result once, then per item the condition (2), the step's nodes (2) and `>` (1).
  const list = (n: number) => ({ l: Array.from({ length: n }, (_, i) => i + 1) });
  assert.equal(cost('claims.l.all(x, x > 0)', list(10)), 3 + 5 * 10);
  assert.equal(cost('claims.l.all(x, x > 0)', list(20)), 3 + 5 * 20);
  // `in` a list costs the list's size.
  assert.equal(cost("'b' in claims.l", { l: ['a', 'b', 'c', 'd'] }), 2 + 4);
});

test('the per-call limit is a cost: a long string through matches is stopped where a short one is not', () => {
  const expr = claimsEnvironment.compile("claims.s.matches('^(a|b|c|d|e|f|g)+$')");
  assert.equal(expr.evaluate({ claims: fromJson({ s: 'a'.repeat(100) }) }, { maxCost: 1000 }), true);
  assert.throws(
    () => expr.evaluate({ claims: fromJson({ s: 'a'.repeat(2000) }) }, { maxCost: 1000 }),
    (err: unknown) => err instanceof CelEvalError && err.code === 'cost' && err.detail === 'operation cancelled: actual cost limit exceeded',
  );
});
