import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CachedTokenAuthenticator } from '../../gateway/authn/tokencache.js';
import type { IncomingMessage } from 'node:http';
import { BearerAuthenticator, BearerToken, tokenDigest, type TokenAuthenticator } from '../../gateway/authn/token.js';
import { AuthnError, type AuthnResult } from '../../gateway/authn/types.js';

/** A token method that accepts `good-*` tokens (expiring at `expiresAt`, when set) and counts its calls. */
class Counting implements TokenAuthenticator {
  readonly name = 'counting';
  calls = 0;
  expiresAt: number | undefined;
  async authenticateToken({ value: token }: BearerToken, audiences: readonly string[]): Promise<AuthnResult | null> {
    this.calls++;
    await new Promise((r) => setImmediate(r));
    if (!token.startsWith('good-')) throw new AuthnError(this.name, 'bad token');
    return { user: { username: token, groups: [] }, audiences, ...(this.expiresAt !== undefined ? { expiresAt: this.expiresAt } : {}) };
  }
}

function setup(maxEntries = 100) {
  let now = 1_000_000;
  const inner = new Counting();
  const cache = new CachedTokenAuthenticator(inner, { successTtlMs: 60_000, failureTtlMs: 2_000, maxEntries, clock: () => now });
  return {
    inner,
    cache,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
  };
}

describe('token decision cache', () => {
  it('answers a repeated token and audiences from the cache, and asks again for other audiences', async () => {
    const { inner, cache } = setup();
    const a = await cache.authenticateToken(new BearerToken('good-a'), ['api']);
    assert.equal((await cache.authenticateToken(new BearerToken('good-a'), ['api']))!.user.username, 'good-a');
    assert.equal(await cache.authenticateToken(new BearerToken('good-a'), ['api']), a);
    assert.equal(inner.calls, 1);
    await cache.authenticateToken(new BearerToken('good-a'), ['other']);
    assert.equal(inner.calls, 2);
  });

  it('shares one lookup among concurrent misses of one token', async () => {
    const { inner, cache } = setup();
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.authenticateToken(new BearerToken('good-b'), ['api'])));
    assert.equal(inner.calls, 1);
    assert.ok(results.every((r) => r === results[0]));
  });

  it('keeps successes for the success TTL, capped by the credential expiry, and failures only for the failure TTL', async () => {
    const { inner, cache, advance, now } = setup();
    await assert.rejects(async () => cache.authenticateToken(new BearerToken('bad'), ['api']), AuthnError);
    await assert.rejects(async () => cache.authenticateToken(new BearerToken('bad'), ['api']), AuthnError);
    assert.equal(inner.calls, 1);
    advance(2_001);
    await assert.rejects(async () => cache.authenticateToken(new BearerToken('bad'), ['api']), AuthnError);
    assert.equal(inner.calls, 2);

    inner.expiresAt = now() + 10_000;
    await cache.authenticateToken(new BearerToken('good-short'), ['api']);
    advance(9_000);
    await cache.authenticateToken(new BearerToken('good-short'), ['api']);
    assert.equal(inner.calls, 3);
    advance(1_001);
    await cache.authenticateToken(new BearerToken('good-short'), ['api']);
    assert.equal(inner.calls, 4, 'an entry outliving the token expiry is not used');
  });

  it('holds at most maxEntries decisions and drops the least recently used first', async () => {
    const { inner, cache } = setup(3);
    for (const t of ['good-1', 'good-2', 'good-3']) await cache.authenticateToken(new BearerToken(t), ['api']);
    await cache.authenticateToken(new BearerToken('good-1'), ['api']); // used again: now the most recent
    assert.equal(inner.calls, 3);
    await cache.authenticateToken(new BearerToken('good-4'), ['api']); // evicts good-2
    assert.equal(inner.calls, 4);
    await cache.authenticateToken(new BearerToken('good-1'), ['api']);
    await cache.authenticateToken(new BearerToken('good-3'), ['api']);
    await cache.authenticateToken(new BearerToken('good-4'), ['api']);
    assert.equal(inner.calls, 4, 'good-1, good-3 and good-4 are still cached');
    await cache.authenticateToken(new BearerToken('good-2'), ['api']);
    assert.equal(inner.calls, 5, 'good-2 was dropped');
    // Many unique tokens later, still bounded: only the last three are cached.
    for (let i = 0; i < 1000; i++) await cache.authenticateToken(new BearerToken(`good-x${i}`), ['api']);
    const before = inner.calls;
    for (const i of [997, 998, 999]) await cache.authenticateToken(new BearerToken(`good-x${i}`), ['api']);
    assert.equal(inner.calls, before);
    await cache.authenticateToken(new BearerToken('good-x996'), ['api']);
    assert.equal(inner.calls, before + 1);
  });
});

describe('bearer tokens on one connection', () => {
  it("passes every request its own token's digest, also when a connection changes its token (the per-connection digest memo)", async () => {
    const seen: { token: string; digest: string | undefined }[] = [];
    const method: TokenAuthenticator = {
      name: 'recording',
      async authenticateToken({ value: token, digest }, audiences) {
        seen.push({ token, digest });
        return { user: { username: `u-${token}`, groups: [] }, audiences };
      },
    };
    const bearer = new BearerAuthenticator(method, ['api']);
    const socket = {};
    const req = (token: string, s: object = socket): IncomingMessage =>
      ({ headers: { authorization: `Bearer ${token}` }, socket: s }) as unknown as IncomingMessage;
    assert.equal((await bearer.authenticate(req('tok-a')))!.user.username, 'u-tok-a');
    assert.equal((await bearer.authenticate(req('tok-a')))!.user.username, 'u-tok-a');
    assert.equal((await bearer.authenticate(req('tok-b')))!.user.username, 'u-tok-b');
    assert.equal((await bearer.authenticate(req('tok-a', {})))!.user.username, 'u-tok-a');
    assert.deepEqual(
      seen.map((x) => [x.token, x.digest]),
      [
        ['tok-a', tokenDigest('tok-a')],
        ['tok-a', tokenDigest('tok-a')],
        ['tok-b', tokenDigest('tok-b')],
        ['tok-a', tokenDigest('tok-a')],
      ],
    );
  });
});
