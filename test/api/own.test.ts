import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyOwn, deleteOwn } from '../../lib/api/own.js';

test('deleteOwn removes what delete removes: an own member, __proto__ as data included; nothing inherited or absent', () => {
  const proto = { inherited: 1 };
  const obj: Record<string, unknown> = Object.assign(Object.create(proto) as Record<string, unknown>, { a: 1, b: undefined, c: 3 });
  Object.defineProperty(obj, '__proto__', { value: 2, enumerable: true, writable: true, configurable: true });
  for (const k of ['a', 'b', '__proto__', 'inherited', 'absent']) deleteOwn(obj, k);
  assert.deepEqual(Object.keys(obj), ['c']);
  assert.equal(Object.getPrototypeOf(obj), proto);
  assert.equal(obj['inherited'], 1);
});

test('copyOwn copies what a spread of decoded data copies: own members in order, __proto__ and inherited names as data', () => {
  const src = JSON.parse('{"b":1,"2":"two","__proto__":{"x":1},"constructor":"c","toString":"t","a":{"n":[1]},"u":null}') as Record<string, unknown>;
  const copy = copyOwn(src);
  const spread = { ...src };
  assert.deepEqual(Object.keys(copy), Object.keys(spread));
  for (const k of Object.keys(spread)) assert.equal(Object.getOwnPropertyDescriptor(copy, k)?.value, spread[k]);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.equal(JSON.stringify(copy), JSON.stringify(spread));
  assert.notEqual(copy, src);
});
