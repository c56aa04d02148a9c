// The issuer's keys: fetched at start, refetched on an unknown kid (rate
// limited, shared by concurrent misses), retried in the background while the
// provider is down — against a real oidc-provider.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { JwtAuthenticator } from '../../gateway/authn/jwt/authenticator.js';
import { BearerToken } from '../../gateway/authn/token.js';
import { AuthnError } from '../../gateway/authn/types.js';
import { jwtFromFlags } from '../../gateway/config/authnconfig.js';
import { startTestServer } from '../helpers/server.js';
import { startIdp, type TestIdp } from './oidc-idp.js';
import { makeJwt, whoAmI } from './tokenkit.js';
import { eventually } from '../helpers/eventually.js';

let dir: string;
const logs: string[] = [];
const log = (m: string) => logs.push(m);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidc-keys-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function specFor(idp: TestIdp) {
  return jwtFromFlags({
    issuerUrl: idp.url,
    clientId: 'gatehouse',
    usernameClaim: 'sub',
    usernamePrefix: '-',
    groupsClaim: undefined,
    groupsPrefix: '',
    requiredClaims: [],
    caPem: idp.ca.certPem,
    signingAlgs: ['RS256'],
  });
}

describe('key rotation and unknown kids', () => {
  let idp: TestIdp;
  let a: JwtAuthenticator;
  before(async () => {
    idp = await startIdp(dir);
    a = await JwtAuthenticator.create([specFor(idp)], { log, apiAudiences: [], keys: { refreshCooldownMs: 60_000 } });
  });
  after(async () => {
    a.close();
    await idp.close();
  });

  it('fetches the new key after the provider rotates, once', async () => {
    assert.equal((await a.authenticateToken(new BearerToken(await idp.sign({ sub: 'before' })), []))?.user.username, 'before');
    const jwks = idp.hits.get('/jwks')!;
    const k = await idp.rotate();
    const token = await idp.sign({ sub: 'after' }, { kid: k.kid });
    const results = await Promise.all(Array.from({ length: 5 }, () => a.authenticateToken(new BearerToken(token), [])));
    for (const r of results) assert.equal(r?.user.username, 'after');
    assert.equal(idp.hits.get('/jwks'), jwks + 1, 'concurrent misses share one fetch');
    assert.equal((await a.authenticateToken(new BearerToken(await idp.sign({ sub: 'old-key' }, { kid: idp.keys[0]!.kid })), []))?.user.username, 'old-key');
  });

  it('refuses a random kid and does not refetch within the cooldown', async () => {
    const jwks = idp.hits.get('/jwks')!;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 20; i++) {
      const t = makeJwt({ alg: 'RS256', kid: `random-${i}` }, { iss: idp.url, aud: 'gatehouse', sub: 'm', exp: now + 60 }, privateKey);
      await assert.rejects(
        a.authenticateToken(new BearerToken(t), []),
        (err: unknown) => err instanceof AuthnError && /no applicable key found/i.test(err.message),
      );
    }
    assert.equal(idp.hits.get('/jwks'), jwks, 'rate limited: no JWKS fetch');
  });

  it("answers not mine for another issuer's token without any key work", async () => {
    const other = await startIdp(dir);
    try {
      assert.equal(await a.authenticateToken(new BearerToken(await other.sign({ sub: 'x' })), []), null);
      assert.equal(await a.authenticateToken(new BearerToken('not-a-jwt'), []), null);
      assert.equal(other.hits.size, 0);
    } finally {
      await other.close();
    }
  });

  it('is audience-agnostic: valid for the API audiences only', async () => {
    const b = await JwtAuthenticator.create([specFor(idp)], { log, apiAudiences: ['api'] });
    try {
      const t = await idp.sign({ sub: 'aud' });
      assert.deepEqual((await b.authenticateToken(new BearerToken(t), ['api', 'x']))?.audiences, ['api']);
      assert.equal(await b.authenticateToken(new BearerToken(t), ['x']), null);
      assert.equal((await b.authenticateToken(new BearerToken(t), []))?.user.username, 'aud');
    } finally {
      b.close();
    }
  });
});

describe('a provider that is down at start', () => {
  it('fails its tokens at once with 401, then accepts them once the keys load in the background', async () => {
    const idp = await startIdp(dir, { listen: false });
    const s = await startTestServer({
      flags: [
        '--oidc-issuer-url',
        idp.url,
        '--oidc-client-id',
        'gatehouse',
        '--oidc-ca-file',
        idp.caFile,
        '--oidc-username-prefix=oidc:',
        '--authorization-mode=AlwaysAllow',
      ],
    });
    try {
      const token = await idp.sign({ sub: 'late' });
      const first = await whoAmI(s, token);
      assert.equal(first.status, 401);
      assert.ok(
        s.logs.some((l) => l.includes('cannot load signing keys') && l.includes('retrying')),
        s.logs.join('\n'),
      );
      await idp.listen();
      await eventually('the keys to load', async () => (await whoAmI(s, token)).status === 201, { timeoutMs: 20_000 });
      assert.equal((await whoAmI(s, token)).username, 'oidc:late');
    } finally {
      await s.close();
      await idp.close();
    }
  });
});
