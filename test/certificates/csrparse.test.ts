// parseCsrAsync (a create's prevalidate: P-256 keys imported as WebCrypto's
// raw point) answers what parseCsr answers, for every key type and for each
// way a request is refused: the same parse, or the same error message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCsr, parseCsrAsync, parseCsrBase64, prepareCsrBase64 } from '../../lib/certificates/csr.js';
import { hasOpenssl, makeCsr, type KeySpec } from './csrkit.js';

const derOf = (pem: string) => Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
const pemOf = (der: Buffer) => `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;

/** The request with its uncompressed P-256 point changed by `edit` (x at 1..32, y at 33..64 of the point). */
function withPoint(pem: string, edit: (point: Buffer) => void): string {
  const der = derOf(pem);
  // BIT STRING of 66 bytes, no unused bits, uncompressed point.
  const at = der.indexOf(Buffer.from([0x03, 0x42, 0x00, 0x04]));
  assert.ok(at > 0, 'a P-256 point');
  edit(der.subarray(at + 3, at + 3 + 65));
  return pemOf(der);
}

function flipped(der: Buffer, at: number): Buffer {
  der[der.length + at]! ^= 0x01;
  return der;
}

/** What a parse answers: the parse, or its error's message. */
function outcome(parse: () => unknown): unknown {
  try {
    return parse();
  } catch (err) {
    return { error: (err as Error).message };
  }
}

async function outcomeAsync(parse: () => Promise<unknown>): Promise<unknown> {
  try {
    return await parse();
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const P = Buffer.from('ffffffff00000001000000000000000000000000ffffffffffffffffffffffff', 'hex');

describe('parseCsrAsync answers as parseCsr', { skip: hasOpenssl ? false : 'openssl is not installed' }, () => {
  const p256 = hasOpenssl ? makeCsr('/O=dev/CN=p256', 'ec:P-256', 'DNS:a.example,IP:10.0.0.1').csrPem : '';
  const cases: [string, () => string, RegExp | 'parses'][] = [
    ['P-256', () => p256, 'parses'],
    ['P-256, signature changed', () => pemOf(flipped(derOf(p256), -3)), /x509: ECDSA verification failure/],
    ['P-256, point off the curve', () => withPoint(p256, (pt) => (pt[64]! ^= 1)), /x509: unsupported public key algorithm/],
    ['P-256, x not below the field prime', () => withPoint(p256, (pt) => P.copy(pt, 1)), /x509: unsupported public key algorithm/],
    ['P-256, the zero point', () => withPoint(p256, (pt) => pt.fill(0, 1)), /x509: unsupported public key algorithm/],
    ...(['ec:P-384', 'ec:P-521', 'rsa:2048', 'rsa:1024', 'ed25519', 'dsa'] as KeySpec[]).map((k): [string, () => string, RegExp | 'parses'] => [
      k,
      () => makeCsr(`/CN=${k}`, k).csrPem,
      k === 'dsa' ? /algorithm unimplemented/ : 'parses',
    ]),
  ];
  for (const [what, make, want] of cases) {
    it(what, async () => {
      const pem = make();
      const sync = outcome(() => parseCsr(pem));
      const async = await outcomeAsync(() => parseCsrAsync(pem));
      assert.deepEqual(async, sync);
      if (want === 'parses') assert.ok(!('error' in (sync as object)), JSON.stringify(sync));
      else assert.match((sync as { error: string }).error, want);
    });
  }

  it('remembers what prepareCsrBase64 parsed for parseCsrBase64, refusals included', async () => {
    const good = Buffer.from(makeCsr('/CN=remembered').csrPem).toString('base64');
    const bad = Buffer.from(withPoint(p256, (pt) => (pt[64]! ^= 1))).toString('base64');
    await prepareCsrBase64(good);
    await prepareCsrBase64(bad);
    assert.equal(parseCsrBase64(good).commonName, 'remembered');
    assert.throws(() => parseCsrBase64(bad), /x509: unsupported public key algorithm/);
  });
});
