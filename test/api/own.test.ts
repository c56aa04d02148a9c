import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteOwn } from '../../lib/api/own.js';

test('deleteOwn removes what delete removes: an own member, __proto__ as data included; nothing inherited or absent', () => {
  const proto = { inherited: 1 };
  const obj: Record<string, unknown> = Object.assign(Object.create(proto) as Record<string, unknown>, { a: 1, b: undefined, c: 3 });
  Object.defineProperty(obj, '__proto__', { value: 2, enumerable: true, writable: true, configurable: true });
  for (const k of ['a', 'b', '__proto__', 'inherited', 'absent']) deleteOwn(obj, k);
  assert.deepEqual(Object.keys(obj), ['c']);
  assert.equal(Object.getPrototypeOf(obj), proto);
  assert.equal(obj['inherited'], 1);
});
