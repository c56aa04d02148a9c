// The token union: the first method that answers wins, and a method that
// breaks (throws something other than AuthnError) is that method's failure,
// never the request's 500 nor the end of the search.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BearerToken, TokenUnion, tokenDigest, type TokenAuthenticator } from '../../gateway/authn/token.js';
import { AuthnError } from '../../gateway/authn/types.js';

const broken: TokenAuthenticator = { name: 'broken', authenticateToken: () => Promise.reject(new TypeError('boom')) };
const refusing: TokenAuthenticator = { name: 'refusing', authenticateToken: () => Promise.reject(new AuthnError('refusing', 'bad token')) };
const accepting: TokenAuthenticator = {
  name: 'accepting',
  authenticateToken: (token, audiences) => Promise.resolve({ user: { username: `u-${token.value}`, groups: [] }, audiences }),
};

describe('token union', () => {
  it("asks the next method after one that breaks, and the next one's answer wins", async () => {
    const r = await new TokenUnion([broken, refusing, accepting]).authenticateToken(new BearerToken('t1'), ['api']);
    assert.equal(r?.user.username, 'u-t1');
  });

  it("refuses with every method's failure, a broken one as an internal error", async () => {
    await assert.rejects(
      new TokenUnion([broken, refusing]).authenticateToken(new BearerToken('t2'), ['api']),
      (err: unknown) => err instanceof AuthnError && err.message === 'broken: internal error: boom; refusing: bad token',
    );
  });

  it('builds a token with its own digest', () => {
    const t = new BearerToken('some-token');
    assert.equal(t.value, 'some-token');
    assert.equal(t.digest, tokenDigest('some-token'));
  });
});
