// CEL's optional syntax as cel-go's optional library (which kube enables)
// parses, types and evaluates it: `a.?f`, `a[?i]`, `[?x]`, `{?k: v}`,
// `optional.of`, `optional.none`, `optional.ofNonZeroValue`, `.hasValue()`,
// `.value()`, `.orValue()`, `.or()`; and a CRD validation rule written with it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { claimsEnvironment, fromJson, stringList } from '../../lib/cel/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from '../crd/fixtures.js';

const claims = fromJson({ sub: 'alice', groups: ['dev', 'ops'], nested: { team: 'x' }, n: 2 });
const run = (expr: string): unknown => claimsEnvironment.compile(expr).evaluate({ claims });

describe('optional syntax', () => {
  it('selects and indexes optionally, chaining through absent values', () => {
    assert.equal(run("claims.?sub.orValue('none')"), 'alice');
    assert.equal(run("claims.?missing.orValue('none')"), 'none');
    assert.equal(run('claims.?missing.hasValue()'), false);
    assert.equal(run('claims.?sub.hasValue()'), true);
    assert.equal(run("claims.?nested.?team.orValue('')"), 'x');
    assert.equal(run("claims.?missing.?team.orValue('gone')"), 'gone');
    assert.equal(run("claims.groups[?1].orValue('')"), 'ops');
    assert.equal(run("claims.groups[?5].orValue('none')"), 'none');
    assert.equal(run("claims[?'sub'].value()"), 'alice');
    assert.equal(run("claims.?missing.or(optional.of('other')).value()"), 'other');
  });

  it('builds lists and maps with optional members, leaving out the absent ones', () => {
    assert.deepEqual(stringList(run("[?claims.?sub, ?claims.?missing, 'z']") as never), ['alice', 'z']);
    assert.equal(run("{?'a': claims.?sub, ?'b': claims.?missing, 'c': 'y'}.size()"), 2n);
    assert.equal(run("'b' in {?'a': claims.?sub, ?'b': claims.?missing}"), false);
  });

  it('offers optional.of, optional.none and optional.ofNonZeroValue', () => {
    assert.equal(run('optional.of(3).value()'), 3n);
    assert.equal(run('optional.none().orValue(7)'), 7n);
    assert.equal(run("optional.ofNonZeroValue('').hasValue()"), false);
    assert.equal(run('optional.ofNonZeroValue(1).hasValue()'), true);
    assert.throws(() => run('claims.?missing.value()'), /optional\.none\(\) dereference/);
  });

  it('leaves the conditional operator and question marks in strings alone', () => {
    assert.equal(run("claims.n > 1 ? 'big' : 'small'"), 'big');
    assert.equal(run("['a?b', claims.n == 2 ? '.?' : ''].join('')"), 'a?b.?');
    assert.equal(run("{'k': claims.n > 1 ? 1 : 2}['k']"), 1n);
  });

  it('types optional values: the held type, and an optional member that is not an optional', () => {
    const typed = claimsEnvironment.compile('[?optional.of(1), 2]').check(new Map());
    assert.equal(typed.problem, undefined);
    const bad = claimsEnvironment.compile("optional.of(1).orValue('x')").check(new Map());
    assert.match(bad.problem ?? '', /found no matching overload for 'orValue' applied to 'optional_type\(int\)\.\(string\)'/);
    const notOptional = claimsEnvironment.compile('[?1]').check(new Map());
    assert.match(notOptional.problem ?? '', /expected type 'optional_type\(int\)' but found 'int'/);
  });
});

describe('a CRD validation rule with optional syntax', () => {
  let s: TestServer;
  const group = 'opt.example.com';
  const path = `/apis/${group}/v1/namespaces/default/crontabs`;
  before(async () => {
    s = await startTestServer();
    const crd = crontabCrd({ group }) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [
      { rule: 'self.?replicas.orValue(1) <= 5', message: 'at most 5 replicas' },
      { rule: "self.?image.orValue('').startsWith('registry.example/') || !has(self.image)" },
    ];
    const r = await s.admin.request('POST', CRD_PATH, crd);
    assert.equal(r.status, 201, r.text);
    await waitEstablished(s, `crontabs.${group}`, path);
  });
  after(async () => {
    await s.close();
  });

  it('compiles and enforces the rule as kube does', async () => {
    const ok = await s.admin.request('POST', path, crontab('ok', { cronSpec: '* * * * *' }, group));
    assert.equal(ok.status, 201, ok.text);
    const bad = await s.admin.request('POST', path, crontab('bad', { replicas: 9 }, group));
    assert.equal(bad.status, 422, bad.text);
    assert.match(bad.json.message, /spec: Invalid value: "object": at most 5 replicas/);
  });

  it("refuses a rule whose optional types do not match, with cel-go's words", async () => {
    const crd = crontabCrd({ group: 'opt2.example.com' }) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: "self.?replicas.orValue('x') == 1" }];
    const r = await s.admin.request('POST', CRD_PATH, crd);
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /found no matching overload for 'orValue' applied to 'optional_type\(int\)\.\(string\)'/);
  });
});
