// RFC 6902 appendix A, every example, against lib/patch/json.ts (fast-json-patch underneath).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyJsonPatch, parseJsonPatch } from '../../lib/patch/json.js';
import { PatchError } from '../../lib/patch/errors.js';

const BUDGET = 1 << 20;
const apply = (doc: unknown, patch: unknown) => applyJsonPatch(doc, parseJsonPatch(patch), BUDGET);
const fails = (doc: unknown, patch: unknown, code: PatchError['code'] = 'failed') =>
  assert.throws(
    () => apply(doc, patch),
    (e: unknown) => e instanceof PatchError && e.code === code,
  );

describe('RFC 6902 appendix A', () => {
  it('A.1 adds an object member', () => {
    assert.deepEqual(apply({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }]), { baz: 'qux', foo: 'bar' });
  });
  it('A.2 adds an array element', () => {
    assert.deepEqual(apply({ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }]), { foo: ['bar', 'qux', 'baz'] });
  });
  it('A.3 removes an object member', () => {
    assert.deepEqual(apply({ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }]), { foo: 'bar' });
  });
  it('A.4 removes an array element', () => {
    assert.deepEqual(apply({ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }]), { foo: ['bar', 'baz'] });
  });
  it('A.5 replaces a value', () => {
    assert.deepEqual(apply({ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }]), { baz: 'boo', foo: 'bar' });
  });
  it('A.6 moves a value', () => {
    const doc = { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } };
    assert.deepEqual(apply(doc, [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }]), { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } });
  });
  it('A.7 moves an array element', () => {
    assert.deepEqual(apply({ foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }]), {
      foo: ['all', 'cows', 'eat', 'grass'],
    });
  });
  it('A.8 passes a test of values', () => {
    const doc = { baz: 'qux', foo: ['a', 2, 'c'] };
    assert.deepEqual(
      apply(doc, [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ]),
      doc,
    );
  });
  it('A.9 fails a test of a value', () => {
    fails({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]);
  });
  it('A.10 adds a nested member object', () => {
    assert.deepEqual(apply({ foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }]), { foo: 'bar', child: { grandchild: {} } });
  });
  it('A.11 ignores unrecognized elements of an operation', () => {
    assert.deepEqual(apply({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }]), { foo: 'bar', baz: 'qux' });
  });
  it('A.12 fails to add to a nonexistent target', () => {
    fails({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]);
  });
  it('A.14 tests with escape ordering (~01 is ~1)', () => {
    const doc = { '/': 9, '~1': 10 };
    assert.deepEqual(apply(doc, [{ op: 'test', path: '/~01', value: 10 }]), doc);
  });
  it('A.15 fails a test comparing a string with a number', () => {
    fails({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]);
  });
  it('A.16 adds an array value', () => {
    assert.deepEqual(apply({ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }]), { foo: ['bar', ['abc', 'def']] });
  });
  it('refuses an operation without its op, path or value as malformed', () => {
    fails({}, [{ path: '/a', value: 1 }], 'malformed');
    fails({}, [{ op: 'add', value: 1 }], 'malformed');
    fails({}, [{ op: 'replace', path: '/a' }], 'malformed');
    fails({}, { op: 'add' }, 'malformed');
  });
  it('refuses to replace or remove a missing path', () => {
    fails({ a: 1 }, [{ op: 'replace', path: '/b', value: 2 }]);
    fails({ a: 1 }, [{ op: 'remove', path: '/b' }]);
  });
  it('refuses copies that grow the document past the budget', () => {
    const ops = [{ op: 'add', path: '/a', value: ['x'.repeat(1000)] }];
    for (let i = 0; i < 30; i++) ops.push({ op: 'copy', from: '/a', path: '/a/-' } as never);
    assert.throws(
      () => applyJsonPatch({}, parseJsonPatch(ops), 10_000),
      (e: unknown) => e instanceof PatchError && e.code === 'too-large',
    );
  });
  it('never mutates the document it patches', () => {
    const doc = Object.freeze({ a: Object.freeze([1]) });
    assert.deepEqual(apply(doc, [{ op: 'add', path: '/a/-', value: 2 }]), { a: [1, 2] });
  });
});
