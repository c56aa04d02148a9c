// lib/cbor on its own: what the decoder turns into JSON values and what it
// refuses (each with its CborError code), and that the encoder's bytes are
// what a strict core-deterministic decoder (cbor2 with cde) accepts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decode as strictDecode, Tag } from 'cbor2';
import { Encoder } from 'cbor-x';
import { decodeCborObject, decodeCborValue } from '../../lib/cbor/decode.js';
import { CborError } from '../../lib/cbor/errors.js';
import { cborItem, encodeCbor, encodeCborEvent, encodeCborList } from '../../lib/cbor/encode.js';

const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex');
const writer = new Encoder({ useRecords: false, mapsAsObjects: true, useTag259ForMaps: false } as ConstructorParameters<typeof Encoder>[0]);
const strict = (b: Uint8Array) => strictDecode(b, { cde: true, rejectDuplicateKeys: true, ignoreGlobalTags: true });

function refused(bytes: Buffer, code: CborError['code'], message: RegExp): void {
  assert.throws(
    () => decodeCborObject(bytes),
    (err: unknown) => err instanceof CborError && err.code === code && message.test(err.message),
  );
}

describe('decoding a CBOR body', () => {
  it('keeps __proto__, constructor and prototype as ordinary keys', () => {
    const v = decodeCborObject(
      Buffer.from(
        writer.encode(
          new Map<string, unknown>([
            ['__proto__', { polluted: true }],
            ['constructor', 'c'],
            ['prototype', 1],
          ]),
        ),
      ),
    );
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(Object.keys(v), ['__proto__', 'constructor', 'prototype']);
    assert.deepEqual(Object.getOwnPropertyDescriptor(v, '__proto__')?.value, { polluted: true });
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
  it('reads byte strings as UTF-8 strings, as keys and as values', () => {
    assert.deepEqual(decodeCborObject(hex('a1 41 61 43 c3 a9 21')), { a: 'é!' });
  });
  it('drops the self-described tag wherever it stands', () => {
    assert.deepEqual(decodeCborObject(hex('d9d9f7 a1 6161 d9d9f7 81 01')), { a: [1] });
  });
  it('reads int64 integers as numbers and refuses larger ones', () => {
    assert.deepEqual(decodeCborValue(hex('1b 7fffffffffffffff')), 2 ** 63);
    assert.equal(decodeCborValue(hex('3b 7fffffffffffffff')), -(2 ** 63));
    refused(hex('a1 6161 1b 8000000000000000'), 'invalid-value', /does not fit in 64 bits/);
  });
  it('refuses tags other than 55799, naming the tag and where it stands', () => {
    refused(hex('a1 6161 c2 41 01'), 'unsupported-tag', /<root>\.a: tag 2 is not supported/);
    refused(hex('a1 6161 d90103 a0'), 'unsupported-tag', /tag 259/);
  });
  it('refuses duplicate keys, as text, as bytes, or one of each', () => {
    refused(hex('a2 6161 01 6161 02'), 'duplicate-key', /duplicate map key "a"/);
    refused(hex('a2 4161 01 4161 02'), 'duplicate-key', /duplicate map key "a"/);
    refused(hex('a2 6161 01 4161 02'), 'duplicate-key', /duplicate map key "a"/);
  });
  it('refuses non-string keys, invalid UTF-8, NaN, Infinity, undefined and simple values', () => {
    refused(hex('a1 01 01'), 'invalid-value', /a map key must be a string/);
    refused(hex('a1 6161 42 fffe'), 'invalid-value', /not valid UTF-8/);
    refused(hex('a1 6161 f97e00'), 'invalid-value', /NaN/);
    refused(hex('a1 6161 f97c00'), 'invalid-value', /Infinity/);
    refused(hex('a1 6161 f7'), 'malformed', /undefined/i);
    refused(hex('a1 6161 f0'), 'malformed', /simple/i);
  });
  it('refuses truncation, trailing bytes, nesting past 64 and a body that is not a map', () => {
    refused(hex('a2 6161 01'), 'malformed', /truncated/);
    refused(hex('a1 6161 01 00'), 'malformed', /Extra data/);
    refused(Buffer.concat([hex('a1 6161'), Buffer.alloc(70, 0x81), hex('00')]), 'too-deep', /nested more than 64/);
    refused(hex('81 01'), 'not-an-object', /must be a map/);
    refused(hex('f6'), 'not-an-object', /not null/);
  });
});

describe('encoding CBOR answers', () => {
  const obj = {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: 'a', labels: { '10': 'x', '9': 'y', b: 'z', é: 'u' } },
    data: { big: 2 ** 40, neg: -(2 ** 40), half: 1.5, skip: undefined },
    list: [undefined, 1],
  };

  it('writes the self-described tag, then keys in core deterministic order, integers shortest', () => {
    const b = encodeCbor(obj);
    assert.deepEqual(b.subarray(0, 3), hex('d9d9f7'));
    const v = strict(b) as Tag;
    assert.equal(Number(v.tag), 55799);
    assert.deepEqual(v.contents, JSON.parse(JSON.stringify(obj)), 'the fields JSON would hold');
    // As Maps (a JS object would put "9" and "10" first whatever the wire order).
    const m = (strictDecode(b, { cde: true, preferMap: true, ignoreGlobalTags: true }) as Tag).contents as Map<string, Map<string, Map<string, string>>>;
    assert.deepEqual([...m.get('metadata')!.get('labels')!.keys()], ['9', 'b', '10', 'é']);
    assert.deepEqual([...m.keys()], ['data', 'kind', 'list', 'metadata', 'apiVersion']);
  });
  it("writes each float in the shortest width that holds it exactly, as kube's encoder (ShortestFloat16)", () => {
    const item = (v: unknown) => cborItem({ v }).subarray(3).toString('hex'); // after the map head and the key "v"
    assert.equal(item(1.5), 'f93e00', 'float16');
    assert.equal(item(-2.5), 'f9c100');
    assert.equal(item(5.960464477539063e-8), 'f90001', 'the smallest float16 subnormal');
    assert.equal(item(65504.5), 'fa477fe080', 'float32: past float16');
    assert.equal(item(100000.5), 'fa47c35040');
    assert.equal(item(0.1), 'fb3fb999999999999a', 'float64: no shorter exact form');
    assert.equal(item(1e20), 'fb4415af1d78b58c40', 'an integer past int64 is a float');
    assert.equal(item(7), '07', 'integers stay integers');
    const nested = encodeCbor({ spec: { ratio: 0.5, items: [1.25, 'x', null, true, -3] } });
    assert.deepEqual((strict(nested) as Tag).contents, { spec: { ratio: 0.5, items: [1.25, 'x', null, true, -3] } });
    assert.ok(nested.includes(hex('f93800')) && nested.includes(hex('f93d00')), nested.toString('hex'));
  });

  it('encodes a frozen object once and reuses its bytes in lists and events', () => {
    const frozen = Object.freeze({ kind: 'ConfigMap', metadata: Object.freeze({ name: 'f' }) });
    assert.equal(cborItem(frozen), cborItem(frozen));
    const list = strict(encodeCborList('v1', 'ConfigMapList', { resourceVersion: '7' }, [frozen, frozen])) as Tag;
    assert.deepEqual(list.contents, { kind: 'ConfigMapList', items: [frozen, frozen], metadata: { resourceVersion: '7' }, apiVersion: 'v1' });
    const ev = strict(encodeCborEvent('ADDED', frozen)) as Tag;
    assert.deepEqual(ev.contents, { type: 'ADDED', object: frozen });
  });
});
