// The cache file's name hash against node:crypto's SHA-256: the FIPS 180-4
// examples, every length around the 55/56/64-byte padding edges, and
// multi-byte UTF-8.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sha256Hex } from '../../gateway/cli/oidclogin/sha256.js';

const node = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

test('the FIPS 180-4 examples', () => {
  assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'), '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
});

test('every length from 0 to 300 bytes and multi-byte text, as node:crypto', () => {
  for (let n = 0; n <= 300; n++) {
    const s = randomBytes(n).toString('latin1').slice(0, n);
    assert.equal(sha256Hex(s), node(s), `length ${n}`);
  }
  for (const s of ['ünïcödé', '日本語の発行者', '🔑'.repeat(40), JSON.stringify(['https://idp.example.com', 'kubectl', ['email', 'openid'], ''])])
    assert.equal(sha256Hex(s), node(s));
});
