// encode's JSON answers: a large frozen object (as stores hand them out) goes
// out as the bytes kept for it, the same memory each time; anything else as a
// string made for that answer. Either is kube's bytes: ending in "\n".
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from '../../lib/http/respond.js';
import { deepFreezeJson } from '../../lib/api/json.js';
import type { Output } from '../../lib/http/negotiate.js';

const JSON_OUT: Output = { format: 'json', contentType: 'application/json' };
const large = () => ({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'l' }, data: { a: 'ü'.repeat(10_000), b: 'x'.repeat(10_000) } });

describe('encode (JSON)', () => {
  it('answers a large frozen object with its kept bytes, the same memory every time', () => {
    const obj = deepFreezeJson(large());
    const a = encode(obj, JSON_OUT, false);
    const b = encode(obj, JSON_OUT, false);
    assert.ok(Buffer.isBuffer(a) && Buffer.isBuffer(b));
    assert.equal(a.toString('utf8'), JSON.stringify(obj) + '\n');
    assert.equal(a.buffer, b.buffer);
    assert.equal(a.byteOffset, b.byteOffset);
    assert.equal(a.length, Buffer.byteLength(JSON.stringify(obj)) + 1);
  });

  it('answers small, unfrozen and pretty objects with a string', () => {
    const small = deepFreezeJson({ kind: 'ConfigMap', data: { a: 'b' } });
    assert.equal(encode(small, JSON_OUT, false), JSON.stringify(small) + '\n');
    const open = large();
    assert.equal(encode(open, JSON_OUT, false), JSON.stringify(open) + '\n');
    const frozen = deepFreezeJson(large());
    assert.equal(encode(frozen, JSON_OUT, true), JSON.stringify(frozen, null, 2));
  });

  // kube's encoder (json.NewEncoder(w).Encode) ends a body with "\n" and escapes
  // <, >, & as Go's encoding/json does; its pretty form (json.MarshalIndent) has no final newline.
  it("writes JSON as kube's encoder does: HTML-safe escapes, a final newline, none when pretty", () => {
    const obj = { kind: 'ConfigMap', data: { a: '<b> & c\u2028' } };
    const want = '{"kind":"ConfigMap","data":{"a":"\\u003cb\\u003e \\u0026 c\\u2028"}}';
    assert.equal(encode(obj, JSON_OUT, false), want + '\n');
    assert.equal(encode(deepFreezeJson(structuredClone(obj)), JSON_OUT, false), want + '\n');
    assert.equal(encode(obj, JSON_OUT, true), '{\n  "kind": "ConfigMap",\n  "data": {\n    "a": "\\u003cb\\u003e \\u0026 c\\u2028"\n  }\n}');
    assert.deepEqual(JSON.parse(want), obj);
  });
});
