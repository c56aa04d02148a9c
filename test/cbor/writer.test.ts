// lib/cbor/writer.ts against the road it replaced (the value copied into
// sorted Maps, then cbor-x, or encode.ts's float writer): the same bytes for
// every built-in kind's fixture and for values that stress key order,
// integer widths, floats, strings and what JSON leaves out; the event it
// writes equals one made of the old pieces; what it gives up on still gets
// encode.ts's answer or error.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decode as strictDecode } from 'cbor2';
import { CborError } from '../../lib/cbor/errors.js';
import { cborItem, encodeCborEvent, encodeThroughMaps, SELF_DESCRIBED, splicedMap } from '../../lib/cbor/encode.js';
import { takeBytes, writeItem } from '../../lib/cbor/writer.js';
import { configMap, coreEvent, eventsEvent, lease, pod, secret, service } from '../protobuf/fixtures.js';

const direct = (v: unknown): Buffer | undefined => (writeItem(v, 0) >= 0 ? takeBytes() : undefined);

function same(v: unknown, what: string): void {
  const got = direct(v);
  assert.ok(got, `${what}: the writer gave up`);
  const want = encodeThroughMaps(v);
  assert.equal(got.toString('hex'), want.toString('hex'), what);
  strictDecode(got, { cde: true, rejectDuplicateKeys: true, ignoreGlobalTags: true }); // core-deterministic
}

const edge = {
  '10': 'integer-like keys sort as text: by length, then bytes',
  '2': 1,
  b: [1, 23, 24, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER, -1, -24, -25, -256, -257, -(2 ** 32), -(2 ** 32) - 1, -0],
  aa: [1.5, 0.1, -2.5, 65504.5, 5.960464477539063e-8, 1e20, NaN, Infinity, null, true, false],
  é: 'a non-ASCII key sorts by its UTF-8 bytes',
  zz: { '': 'empty key', nested: { deeper: [{ x: undefined, y: 1 }, undefined, () => 1] } },
  s: ['', 'x'.repeat(23), 'x'.repeat(24), 'x'.repeat(255), 'x'.repeat(256), 'y'.repeat(70000), 'ünï', '日本語のテキスト', '😀', 'mixed ascii then ü'],
  skipped: undefined,
  fn: () => 2,
  __proto__: null,
};

describe('the CBOR writer', () => {
  it('writes the bytes of the Maps-then-cbor-x road for every fixture kind and edge value', () => {
    for (const obj of [pod, service, secret, configMap, coreEvent, eventsEvent, lease]) same(obj, (obj as { kind: string }).kind);
    same(edge, 'edge values');
    same(JSON.parse('{"__proto__":{"a":1},"constructor":"c"}'), '__proto__ as data');
    for (const v of [0, -1, 'text', null, true, [], {}, [[[]]], 1.5]) same(v, JSON.stringify(v));
  });

  it('writes an event equal to the one made of the old pieces, and remembers the object it wrote', () => {
    for (const obj of [pod, configMap, secret]) {
      const frozen = Object.freeze(structuredClone(obj));
      const want = Buffer.concat([
        SELF_DESCRIBED,
        ...splicedMap([
          ['type', encodeThroughMaps('MODIFIED')],
          ['object', encodeThroughMaps(obj)],
        ]),
      ]);
      assert.equal(encodeCborEvent('MODIFIED', frozen).toString('hex'), want.toString('hex'));
      assert.equal(cborItem(frozen).toString('hex'), encodeThroughMaps(obj).toString('hex'), 'the item remembered from the event');
      assert.equal(encodeCborEvent('MODIFIED', obj).toString('hex'), want.toString('hex'), 'unfrozen');
    }
  });

  it('gives up on what has no JSON form here, and encode.ts answers as before', () => {
    const withToJson = { when: new Date(0) };
    assert.equal(writeItem(withToJson, 0), -1);
    assert.equal(cborItem(withToJson).toString('hex'), encodeThroughMaps(withToJson).toString('hex'));
    assert.equal(writeItem({ n: 1n }, 0), -1);
    assert.throws(() => cborItem({ n: 1n }), CborError);
    let deep: unknown = 1;
    for (let i = 0; i < 600; i++) deep = [deep];
    assert.equal(writeItem(deep, 0), -1);
    assert.throws(
      () => cborItem({ deep }),
      (err: unknown) => err instanceof CborError && err.code === 'too-deep',
    );
  });
});
