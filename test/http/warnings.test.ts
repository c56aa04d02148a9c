// Warning headers are bounded as kube-apiserver's warning recorder bounds them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { newExchange, type Exchange } from '../../lib/http/exchange.js';
import { addWarnings } from '../../lib/http/warnings.js';

const response = (): Exchange => {
  const req = new IncomingMessage(new Socket());
  return newExchange(req, new ServerResponse(req));
};
const warnings = (x: Exchange): string[] => {
  const h = x.res.getHeader('Warning');
  return h === undefined ? [] : Array.isArray(h) ? h : [String(h)];
};

describe('addWarnings', () => {
  it('writes each text once, quoted as a 299 warning', () => {
    const res = response();
    addWarnings(res, ['duplicate field "k"', 'unknown field "x"', 'duplicate field "k"']);
    addWarnings(res, ['unknown field "x"']);
    assert.deepEqual(warnings(res), ['299 - "duplicate field \\"k\\""', '299 - "unknown field \\"x\\""']);
  });

  it('keeps texts whole while they fit in 4,096 runes', () => {
    const res = response();
    const texts = Array.from({ length: 4 }, (_, i) => `${i}${'é'.repeat(1023)}`);
    addWarnings(res, texts);
    assert.deepEqual(
      warnings(res),
      texts.map((t) => `299 - ${JSON.stringify(t)}`),
    );
  });

  it('past the budget cuts every text to 256 runes, then drops the rest', () => {
    const res = response();
    const texts = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(2, '0')}${'w'.repeat(998)}`);
    addWarnings(res, texts);
    const out = warnings(res);
    // 256-rune texts until the budget of 4,096 is reached: 16 of them.
    assert.equal(out.length, 16);
    out.forEach((h, i) => assert.equal(h, `299 - ${JSON.stringify(`${String(i).padStart(2, '0')}${'w'.repeat(254)}`)}`));
  });

  it('writes nothing once the headers are sent, or for no texts', () => {
    const res = response();
    addWarnings(res, []);
    assert.deepEqual(warnings(res), []);
  });
});
