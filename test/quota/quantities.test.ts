// Quantities as kube's resource.Quantity prints and sums them (the texts in
// quota messages and status.used): the canonical form of each format, a
// zero taking the other operand's format, rounding below a nano.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addQuantities, quantityString, readQuantity, subtractQuantities, ZERO_QUANTITY } from '../../lib/registry/builtins/quantities.js';

const q = (s: string) => readQuantity(s)!;

test('canonical texts as Quantity.String', () => {
  const cases: Array<[string, string]> = [
    ['1.5', '1500m'],
    ['0.1', '100m'],
    ['2000', '2k'],
    ['1500', '1500'],
    ['100', '100'],
    ['1000m', '1'],
    ['250m', '250m'],
    ['1536Mi', '1536Mi'],
    ['1024Mi', '1Gi'],
    ['1Ki', '1Ki'],
    ['1e3', '1e3'],
    ['12e6', '12e6'],
    ['100n', '100n'],
    ['0', '0'],
    ['1.0000000001', '1000000001n'],
  ];
  for (const [input, want] of cases) assert.equal(quantityString(q(input)), want, input);
  // A binary amount under 1024, or not whole, prints as a decimal one.
  assert.equal(quantityString({ amount: q('1000').amount, format: 'BinarySI' }), '1k');
  assert.equal(quantityString({ amount: q('1025').amount, format: 'BinarySI' }), '1025');
  assert.equal(quantityString({ amount: q('0.5').amount, format: 'BinarySI' }), '500m');
});

test('sums keep the first format unless it is zero', () => {
  assert.equal(quantityString(addQuantities(q('1Gi'), q('512Mi'))), '1536Mi');
  assert.equal(quantityString(addQuantities(ZERO_QUANTITY, q('1Gi'))), '1Gi');
  assert.equal(quantityString(addQuantities(q('250m'), q('750m'))), '1');
  assert.equal(quantityString(addQuantities(q('1'), q('1Gi'))), '1073741825');
  assert.equal(quantityString(subtractQuantities(q('1Gi'), q('512Mi'))), '512Mi');
  assert.equal(quantityString(subtractQuantities(q('1'), q('1500m'))), '-500m');
});
