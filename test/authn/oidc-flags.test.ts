// OIDC by --oidc-* flags against a real oidc-provider over HTTPS, the real
// kubectl with --token, and token attacks: each refused with 401.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startIdp, type TestIdp } from './oidc-idp.js';
import { hasKubectl, kubectl, makeJwt, whoAmI, withToken } from './tokenkit.js';

let dir: string;
let idp: TestIdp;
let other: TestIdp;
let s: TestServer;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidc-flags-'));
  idp = await startIdp(dir);
  other = await startIdp(dir);
  s = await startTestServer({
    flags: [
      '--oidc-issuer-url',
      idp.url,
      '--oidc-client-id',
      'gatehouse',
      '--oidc-ca-file',
      idp.caFile,
      '--oidc-groups-claim',
      'groups',
      '--oidc-groups-prefix',
      'oidc:',
      '--oidc-required-claim',
      'hd=example.com',
      '--authorization-mode',
      'AlwaysAllow',
    ],
  });
});

after(async () => {
  await s?.close();
  await idp?.close();
  await other?.close();
  await rm(dir, { recursive: true, force: true });
});

const claims = { sub: 'alice', hd: 'example.com', groups: ['dev', 'ops'] };

async function assertUnauthorized(token: string): Promise<void> {
  const r = await withToken(s, token);
  assert.equal(r.status, 401, r.text);
  assert.equal(r.json.kind, 'Status');
  assert.equal(r.json.reason, 'Unauthorized');
  assert.equal(r.json.code, 401);
}

describe('OIDC by flags', () => {
  it('maps an id_token to the user with the issuer prefix and prefixed groups', async () => {
    const me = await whoAmI(s, await idp.sign(claims));
    assert.equal(me.status, 201);
    assert.equal(me.username, `${idp.url}#alice`);
    assert.deepEqual(me.groups, ['oidc:dev', 'oidc:ops', 'system:authenticated']);
  });

  it('fetched discovery and the JWKS once at start, not per request', async () => {
    const before = idp.hits.get('/jwks');
    for (let i = 0; i < 3; i++) assert.equal((await whoAmI(s, await idp.sign({ ...claims, sub: `u${i}` }))).status, 201);
    assert.equal(idp.hits.get('/.well-known/openid-configuration'), 1);
    assert.equal(idp.hits.get('/jwks'), before);
  });

  it('accepts a groups claim that is a single string', async () => {
    const me = await whoAmI(s, await idp.sign({ ...claims, groups: 'solo' }));
    assert.deepEqual(me.groups, ['oidc:solo', 'system:authenticated']);
  });

  it('lets kubectl with --token through authentication as the mapped user', { skip: !hasKubectl }, async () => {
    const token = await idp.sign(claims);
    const who = await kubectl(s, token, ['auth', 'whoami', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(JSON.parse(who.stdout).status.userInfo.username, `${idp.url}#alice`);
    const get = await kubectl(s, token, ['get', 'namespaces', '-o', 'name']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /namespace\/default/);
    const refused = await kubectl(s, await idp.sign(claims, { expiresInSec: -60 }), ['get', 'namespaces']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Unauthorized|must be logged in/);
  });

  it('refuses a token without the required claim', async () => {
    await assertUnauthorized(await idp.sign({ sub: 'alice' }));
    await assertUnauthorized(await idp.sign({ sub: 'alice', hd: 'evil.com' }));
  });

  it('refuses alg none', async () => {
    const now = Math.floor(Date.now() / 1000);
    await assertUnauthorized(
      makeJwt({ alg: 'none', kid: idp.keys[0]!.kid }, { iss: idp.url, aud: 'gatehouse', sub: 'mallory', hd: 'example.com', exp: now + 300, iat: now }),
    );
  });

  it("refuses HS256 signed with the provider's RSA public key as the secret", async () => {
    const now = Math.floor(Date.now() / 1000);
    const pub = createPublicKey({ key: idp.keys[0]!.publicJwk as never, format: 'jwk' });
    const payload = { iss: idp.url, aud: 'gatehouse', sub: 'mallory', hd: 'example.com', exp: now + 300, iat: now };
    for (const secret of [
      pub.export({ type: 'spki', format: 'pem' }) as string,
      pub.export({ type: 'pkcs1', format: 'pem' }) as string,
      JSON.stringify(idp.keys[0]!.publicJwk),
    ]) {
      await assertUnauthorized(makeJwt({ alg: 'HS256', kid: idp.keys[0]!.kid, typ: 'JWT' }, payload, Buffer.from(secret)));
    }
  });

  it('refuses a token signed by an unknown key, with or without a kid', async () => {
    const now = Math.floor(Date.now() / 1000);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const payload = { iss: idp.url, aud: 'gatehouse', sub: 'mallory', hd: 'example.com', exp: now + 300, iat: now };
    await assertUnauthorized(makeJwt({ alg: 'RS256', kid: 'not-a-kid' }, payload, privateKey));
    await assertUnauthorized(makeJwt({ alg: 'RS256', kid: idp.keys[0]!.kid }, payload, privateKey));
    await assertUnauthorized(makeJwt({ alg: 'RS256' }, payload, privateKey));
  });

  it('refuses expired and not-yet-valid tokens', async () => {
    await assertUnauthorized(await idp.sign(claims, { expiresInSec: -1 }));
    const now = Math.floor(Date.now() / 1000);
    await assertUnauthorized(await idp.sign({ ...claims, nbf: now + 3600 }));
    await assertUnauthorized(await idp.sign({ ...claims, exp: undefined }));
  });

  it('refuses a wrong issuer and a wrong audience', async () => {
    await assertUnauthorized(await idp.sign({ ...claims, iss: `${idp.url}/other` }));
    await assertUnauthorized(await idp.sign({ ...claims, aud: 'someone-else' }));
    await assertUnauthorized(await idp.sign({ ...claims, aud: ['a', 'b'] }));
    // A valid token of a provider the server does not trust: not ours, refused, and nothing fetched from it.
    await assertUnauthorized(await other.sign(claims));
    assert.equal(other.hits.size, 0);
  });

  it('refuses a header or payload that is not JSON', async () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64url');
    const good = (await idp.sign(claims)).split('.');
    await assertUnauthorized(`${b64('not json')}.${good[1]}.${good[2]}`);
    await assertUnauthorized(`${good[0]}.${b64('{"iss": ')}.${good[2]}`);
    await assertUnauthorized(`${good[0]}.${b64(JSON.stringify({ iss: idp.url }).slice(0, -1))}.${good[2]}`);
    await assertUnauthorized(`${b64('{"alg":"RS256"')}.${good[1]}.${good[2]}`);
    await assertUnauthorized(`${good[0]}.${good[1]}`);
    await assertUnauthorized(`${good[0]}.${good[1]}.${good[2]}.extra`);
    await assertUnauthorized(`${good[0]}.${good[1]}.!!!`);
  });

  it('refuses a 1 MiB token', async () => {
    const good = (await idp.sign(claims)).split('.');
    const huge = `${good[0]}.${'A'.repeat(1024 * 1024 - good[0]!.length - good[2]!.length - 2)}.${good[2]}`;
    assert.equal(huge.length, 1024 * 1024);
    await assertUnauthorized(huge);
  });

  it('is still serving after every attack', async () => {
    assert.equal((await s.admin.request('GET', '/readyz')).status, 200);
    assert.equal((await whoAmI(s, await idp.sign(claims))).status, 201);
  });
});
