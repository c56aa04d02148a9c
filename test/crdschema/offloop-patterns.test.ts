// Patterns that may compile slowly are not compiled on the event loop: the
// schema lists the tests a write would make (patternTests, on the object as it
// will be defaulted, leaving out values an update does not change), and
// validate reads the verdicts the check worker gave, until the worker finds
// the pattern cheap to compile.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { compileCrdSchema, type CrdVersionRef } from '../../lib/crdschema/index.js';
import { mayCompileSlowly } from '../../lib/crdschema/offloop-patterns.js';

const REF: CrdVersionRef = { group: 'g.example.com', version: 'v1', kind: 'Thing', listKind: 'ThingList', plural: 'things' };
// 70 characters: long enough to be tested off the loop; values of lowercase letters match it.
const LONG = `^(${'[a-z]'.repeat(12)}|[a-z]*)$`;

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        name: { type: 'string', pattern: LONG },
        tags: { type: 'array', items: { type: 'string', pattern: LONG } },
        zone: { type: 'string', pattern: LONG, default: 'west' },
        short: { type: 'string', pattern: '^[a-z]+$' },
      },
    },
  },
};
const obj = (spec: Record<string, unknown>) => ({ apiVersion: 'g.example.com/v1', kind: 'Thing', metadata: { name: 'x' }, spec }) as KObject;

describe('patterns tested off the event loop', () => {
  it('tells the patterns that may compile slowly by length and repeat counts', () => {
    assert.equal(mayCompileSlowly('^[a-z]+$'), false);
    assert.equal(mayCompileSlowly('^[a-z]{1,63}$'), false);
    assert.equal(mayCompileSlowly('^.{0,1000}$'), true);
    assert.equal(mayCompileSlowly(LONG), true);
  });

  it('has no pattern tests when every pattern compiles in place', () => {
    const s = compileCrdSchema({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string', pattern: '^a$' } } } } }, REF);
    assert.equal(s.patternTests, undefined);
  });

  it('lists the values a write tests, defaults included and values an update keeps left out', () => {
    const s = compileCrdSchema(schema, REF);
    const created = s.patternTests!(obj({ name: 'abc', tags: ['t1', 'u'], short: 'q' }), undefined);
    assert.deepEqual(
      created.map((t) => [t.pattern.source, t.value]),
      [
        [LONG, 'abc'],
        [LONG, 't1'],
        [LONG, 'u'],
        [LONG, 'west'],
      ],
    );
    const updated = s.patternTests!(obj({ name: 'abc', zone: 'east' }), obj({ name: 'abc', zone: 'west' }));
    assert.deepEqual(
      updated.map((t) => t.value),
      ['east'],
    );
  });

  it('walks every anyOf branch when collecting: a branch met for now may fail', () => {
    const other = `^(${'[0-9]'.repeat(12)}|[0-9]*)$`;
    const s = compileCrdSchema(
      { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string', anyOf: [{ pattern: LONG }, { pattern: other }] } } } } },
      REF,
    );
    const tests = s.patternTests!(obj({ a: '42' }), undefined);
    assert.deepEqual(
      tests.map((t) => t.pattern.source),
      [LONG, other],
    );
    for (const t of tests) t.pattern.answer(t.value, t.pattern.source === other, false);
    assert.deepEqual(s.validate(obj({ a: '42' }), undefined), []);
  });

  it('validates with the verdicts given, until the pattern is found cheap to compile', () => {
    const s = compileCrdSchema(schema, REF);
    const o = obj({ name: 'abc', zone: 'west' });
    const tests = s.patternTests!(o, undefined);
    // Verdicts contrary to the pattern show that validate reads them rather than compiling it.
    for (const t of tests) t.pattern.answer(t.value, t.value !== 'abc', false);
    assert.deepEqual(
      s.validate(structuredClone(o), undefined).map((c) => c.message),
      [`Invalid value: "abc": spec.name in body should match '${LONG}'`],
    );
    assert.deepEqual(s.patternTests!(o, undefined), [], 'answered values are not asked again');
    tests[0]!.pattern.answer('abc', false, true);
    assert.deepEqual(s.validate(structuredClone(o), undefined), [], 'a cheap pattern compiles in place');
  });
});
