import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPairSync, sign as cryptoSign, constants, type KeyObject } from 'node:crypto';
import { prepareJws, signatureValid, type SignatureThreads } from '../../gateway/authn/jwssignature.js';

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

function jws(alg: string, key: KeyObject, payload: Record<string, unknown> = { sub: 'x' }): string {
  const input = `${b64({ alg, typ: 'JWT' })}.${b64(payload)}`;
  const hash = `sha${alg.slice(2)}`;
  const family = alg.slice(0, 2);
  const sig =
    family === 'ES'
      ? cryptoSign(hash, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : family === 'PS'
        ? cryptoSign(hash, Buffer.from(input), { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST })
        : cryptoSign(hash, Buffer.from(input), key);
  return `${input}.${sig.toString('base64url')}`;
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const shortRsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });

/** As the verifier calls it: prepared once, then checked against a key. */
const check = async (token: string, alg: string, key: KeyObject, threads: SignatureThreads): Promise<boolean> => {
  const jws = prepareJws(token, alg);
  return jws ? await signatureValid(jws, key, threads) : false;
};

for (const threads of ['pool', 'loop'] as const) {
  describe(`JWS signature checks on the ${threads}`, () => {
    it('verifies RS256, RS512, PS256 and ES256 signatures made by the key', async () => {
      for (const [alg, pair] of [
        ['RS256', rsa],
        ['RS512', rsa],
        ['PS256', rsa],
        ['ES256', ec],
      ] as const) {
        assert.equal(await check(jws(alg, pair.privateKey), alg, pair.publicKey, threads), true, alg);
      }
    });

    it("refuses another key's signature, a changed payload, a cut signature and an ECDSA signature for an RSA key", async () => {
      const token = jws('RS256', rsa.privateKey);
      assert.equal(await check(jws('RS256', otherRsa.privateKey), 'RS256', rsa.publicKey, threads), false);
      const [h, , s] = token.split('.');
      assert.equal(await check(`${h}.${b64({ sub: 'admin' })}.${s}`, 'RS256', rsa.publicKey, threads), false);
      assert.equal(await check(token.slice(0, -10), 'RS256', rsa.publicKey, threads), false);
      assert.equal(await check(jws('ES256', ec.privateKey), 'ES256', rsa.publicKey, threads), false);
    });

    it('refuses at once (no check scheduled) what is not a compact JWS, an unknown hash and an RSA key under 2048 bits', () => {
      const token = jws('RS256', rsa.privateKey);
      assert.equal(prepareJws(`${token}.x`, 'RS256'), undefined);
      assert.equal(prepareJws(token.replace('.', '.+'), 'RS256'), undefined);
      assert.equal(prepareJws(token, 'RS1'), undefined);
      assert.equal(signatureValid(prepareJws(jws('RS256', shortRsa.privateKey), 'RS256')!, shortRsa.publicKey, threads), false);
    });

    it('answers every one of many concurrent checks with its own result', async () => {
      const good = Array.from({ length: 150 }, (_, i) => jws('RS256', rsa.privateKey, { sub: `u${i}` }));
      const bad = Array.from({ length: 50 }, (_, i) => jws('RS256', otherRsa.privateKey, { sub: `v${i}` }));
      const all = good.flatMap((g, i) => (i < bad.length ? [g, bad[i]!] : [g]));
      const results = await Promise.all(all.map((t) => check(t, 'RS256', rsa.publicKey, threads)));
      assert.deepEqual(
        results,
        all.map((t) => good.includes(t)),
      );
    });
  });
}

describe('JWS signature checks on the loop', () => {
  it("makes a turn's checks in bounded batches, so other work runs between them", async () => {
    const tokens = Array.from({ length: 200 }, (_, i) => jws('RS256', rsa.privateKey, { sub: `u${i}` }));
    const order: string[] = [];
    const checks = tokens.map((t, i) =>
      check(t, 'RS256', rsa.publicKey, 'loop').then((ok) => {
        assert.equal(ok, true);
        order.push(`check ${i}`);
      }),
    );
    // Queued after all 200: runs once the first batch is done, long before the last check.
    setImmediate(() => order.push('other work'));
    await Promise.all(checks);
    const at = order.indexOf('other work');
    assert.ok(at > 0 && at < order.length - 1, `other work ran at ${at} of ${order.length}`);
  });
});
