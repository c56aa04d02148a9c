// The answer's header strings kept across answers (gateway/aggregation/headstrings.ts): every name and value is
// the string Buffer#toString('latin1') makes of its bytes, whether kept or not, for names and values that repeat,
// change, are too long to keep, or push kept ones out; a kept name is the same string object the next time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headField, headValue } from '../../gateway/aggregation/headstrings.js';
import { isHopByHopAnyCase } from '../../gateway/aggregation/forwardrules.js';

const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');

describe('headField and headValue (gateway/aggregation/headstrings.ts)', () => {
  it('gives the latin1 strings of the bytes, kept ones the next time', () => {
    const a = headField(latin1('Content-Type'));
    assert.equal(a.name, 'Content-Type');
    assert.equal(a.hopByHop, false);
    assert.equal(headField(latin1('Content-Type')), a, 'the kept field');
    assert.notEqual(headField(latin1('content-type')).name, 'Content-Type', 'another spelling is another name');
    const v1 = headValue(a, latin1('application/json'));
    assert.equal(v1, 'application/json');
    assert.equal(headValue(a, latin1('application/json')), v1);
    assert.equal(headValue(a, latin1('application/yaml')), 'application/yaml', 'a changed value of the same length');
    assert.equal(headValue(a, latin1('text/plain')), 'text/plain');
    assert.equal(headValue(a, latin1('')), '');
    assert.equal(headField(latin1('Keep-Alive')).hopByHop, true);
    assert.equal(headField(latin1('TRANSFER-ENCODING')).hopByHop, true);
  });

  it('agrees with toString for Latin-1 bytes, long fields and more names of one length than are kept', () => {
    const names = ['X-Aaa', 'X-Bbb', 'X-Ccc', 'X-Ddd', 'X-Eee', 'X-Fff', 'Date\u00e9', 'X-'.padEnd(80, 'n'), 'Te', 'Upgrade'];
    const values = ['v\u00ff\u0080', 'Mon, 30 Nov 2026 22:00:00 GMT', 'x'.repeat(300), '', '0'];
    for (let round = 0; round < 3; round++) {
      for (const n of names) {
        const f = headField(latin1(n));
        assert.equal(f.name, latin1(n).toString('latin1'));
        assert.equal(f.hopByHop, isHopByHopAnyCase(f.name));
        for (const v of values) assert.equal(headValue(f, latin1(v)), latin1(v).toString('latin1'));
      }
    }
  });
});
