// OIDC by --authentication-config against a real oidc-provider: CEL claim
// and user validation rules, claim mappings, discoveryURL, and reload of the
// file (good → bad keeps the old one → good applies) with its metrics.
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startIdp, type TestIdp } from './oidc-idp.js';
import { whoAmI, withToken } from './tokenkit.js';
import { eventually } from '../helpers/eventually.js';

let dir: string;
let idp: TestIdp;
let s: TestServer;
let configFile: string;

const indent = (pem: string, n: number) =>
  pem
    .replace(/\r/g, '')
    .trim()
    .split('\n')
    .map((l) => `${' '.repeat(n)}${l}`)
    .join('\n');

function config(opts: { usernamePrefix?: string; broken?: boolean } = {}): string {
  return `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${idp.url}
    certificateAuthority: |
${indent(idp.ca.certPem, 6)}
    audiences: [gatehouse, other-audience]
    audienceMatchPolicy: MatchAny
  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: "claims.exp - claims.iat <= 3600"
    message: token lifetime is too long
  claimMappings:
    username:
      expression: "claims.email_verified == true ? '${opts.usernamePrefix ?? ''}' + claims.email : ''"
    groups:
      expression: "has(claims.groups) ? claims.groups.map(g, 'oidc:' + g) : []"
    uid:
      claim: sub
    extra:
    - key: example.com/team
      valueExpression: "has(claims.team) ? claims.team : ''"
    - key: example.com/tenant
      valueExpression: "['t1', 't2']"
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: username must not use the system prefix
  - expression: "!('oidc:banned' in user.groups)"
    message: banned users are not allowed
${opts.broken ? '  bogusField: true\n' : ''}- issuer:
    url: ${idp.url}/mismatch
    discoveryURL: ${idp.url}/.well-known/openid-configuration
    certificateAuthority: |
${indent(idp.ca.certPem, 6)}
    audiences: [gatehouse]
  claimMappings:
    username:
      claim: sub
      prefix: ""
`;
}

async function writeConfig(text: string): Promise<void> {
  // Written aside and renamed into place, as editors and config management do.
  const tmp = `${configFile}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, configFile);
}

async function reloads(status: 'success' | 'failure'): Promise<{ count: number; timestamp: number }> {
  const r = await s.admin.request('GET', '/metrics');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain/);
  let count = 0;
  let timestamp = 0;
  for (const line of r.text.split('\n')) {
    const m = /^apiserver_authentication_config_controller_automatic_reload(s_total|_last_timestamp_seconds)\{(.*)\} (\S+)$/.exec(line);
    if (!m || !m[2]!.includes(`status="${status}"`)) continue;
    assert.match(m[2]!, /apiserver_id_hash="sha256:[0-9a-f]{64}"/);
    if (m[1] === 's_total') count += Number(m[3]);
    else timestamp = Math.max(timestamp, Number(m[3]));
  }
  return { count, timestamp };
}

const good = { sub: 'uid-alice', hd: 'example.com', email: 'alice@example.com', email_verified: true, groups: ['dev'], team: 'blue' };

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidc-config-'));
  idp = await startIdp(dir);
  configFile = join(dir, 'authn.yaml');
  await writeConfig(config());
  s = await startTestServer({ flags: ['--authentication-config', configFile, '--authorization-mode', 'AlwaysAllow'] });
});

after(async () => {
  await s?.close();
  await idp?.close();
  await rm(dir, { recursive: true, force: true });
});

async function status(token: string): Promise<number> {
  return (await withToken(s, token)).status;
}

describe('OIDC by the authentication configuration file', () => {
  it('maps username, groups, uid and extra with CEL expressions', async () => {
    const me = await whoAmI(s, await idp.sign(good));
    assert.equal(me.status, 201);
    assert.equal(me.username, 'alice@example.com');
    assert.equal(me.uid, 'uid-alice');
    assert.deepEqual(me.groups, ['oidc:dev', 'system:authenticated']);
    assert.deepEqual(me.extra, { 'example.com/team': ['blue'], 'example.com/tenant': ['t1', 't2'] });
  });

  it('leaves out an extra key whose expression yields nothing', async () => {
    const me = await whoAmI(s, await idp.sign({ ...good, team: undefined }));
    assert.deepEqual(me.extra, { 'example.com/tenant': ['t1', 't2'] });
  });

  it('accepts any of the audiences under MatchAny', async () => {
    assert.equal(await status(await idp.sign({ ...good, aud: 'other-audience' })), 200);
    assert.equal(await status(await idp.sign({ ...good, aud: ['x', 'gatehouse'] })), 200);
    assert.equal(await status(await idp.sign({ ...good, aud: 'nobody' })), 401);
  });

  it('refuses a token failing a claim validation rule', async () => {
    assert.equal(await status(await idp.sign({ ...good, hd: undefined })), 401);
    assert.equal(await status(await idp.sign({ ...good, hd: 'elsewhere.com' })), 401);
    assert.equal(await status(await idp.sign(good, { expiresInSec: 7200 })), 401);
    assert.ok(
      s.logs.some((l) => l.includes('token lifetime is too long')),
      "the rule's message is logged",
    );
  });

  it('refuses an empty username from the mapping expression', async () => {
    assert.equal(await status(await idp.sign({ ...good, email_verified: false })), 401);
  });

  it('refuses a token failing a user validation rule', async () => {
    assert.equal(await status(await idp.sign({ ...good, groups: ['dev', 'banned'] })), 401);
    assert.ok(s.logs.some((l) => l.includes('banned users are not allowed')));
  });

  it('refuses a username starting with system:', async () => {
    assert.equal(await status(await idp.sign({ ...good, email: 'system:admin' })), 401);
    const r = await withToken(s, await idp.sign({ ...good, email: 'system:masters' }));
    assert.equal(r.status, 401);
    assert.equal(r.json.reason, 'Unauthorized');
  });

  it('does not load an issuer whose discovered issuer differs, and refuses its tokens', async () => {
    assert.equal(await status(await idp.sign({ ...good, iss: `${idp.url}/mismatch` })), 401);
    // The document's issuer is compared with issuer.url (…/mismatch), not with where it was fetched.
    assert.ok(
      s.logs.some(
        (l) => l.includes(`discovery of issuer "${idp.url}/mismatch"`) && l.includes('discovered metadata issuer does not match the expected issuer'),
      ),
      s.logs.join('\n'),
    );
  });

  it('serves /metrics in the text format with the reload metrics', async () => {
    const r = await s.admin.request('GET', '/metrics');
    assert.equal(r.status, 200);
    assert.match(r.text, /# TYPE apiserver_authentication_config_controller_automatic_reloads_total counter/);
    assert.match(r.text, /# TYPE apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds gauge/);
    assert.match(r.text, /apiserver_authentication_config_controller_last_config_info\{apiserver_id_hash="sha256:[0-9a-f]{64}",hash="sha256:[0-9a-f]{64}"\} 1/);
  });

  it('reloads a changed file, keeps the old one when the new one is bad, and applies a good one again', async () => {
    const token = await idp.sign(good);
    const s0 = await reloads('success');
    const f0 = await reloads('failure');

    await writeConfig(config({ usernamePrefix: 'v2:' }));
    await eventually('a successful reload', async () => (await reloads('success')).count > s0.count);
    assert.equal((await whoAmI(s, token)).username, 'v2:alice@example.com');
    const s1 = await reloads('success');
    assert.ok(s1.timestamp > 0);

    await writeConfig(config({ usernamePrefix: 'v3:', broken: true }));
    await eventually('a failed reload', async () => (await reloads('failure')).count > f0.count);
    assert.equal((await whoAmI(s, token)).username, 'v2:alice@example.com', 'the previous configuration stays');
    assert.equal((await reloads('success')).count, s1.count);
    assert.ok(
      s.logs.some((l) => l.includes('keeping the previous configuration') && l.includes('jwt[0].bogusField: unknown field')),
      s.logs.join('\n'),
    );

    await writeConfig(config({ usernamePrefix: 'v4:' }));
    await eventually('a successful reload after a bad one', async () => (await reloads('success')).count > s1.count);
    assert.equal((await whoAmI(s, token)).username, 'v4:alice@example.com');
    assert.ok((await reloads('success')).timestamp >= s1.timestamp);
  });
});

describe('under the default authorization mode (AlwaysDeny)', () => {
  it('authenticates the token and names the mapped user in the 403; /metrics is authorized like any path', async () => {
    const denying = await startTestServer({ flags: ['--authentication-config', configFile] });
    try {
      const r = await withToken(denying, await idp.sign(good));
      assert.equal(r.status, 403, r.text);
      assert.match(r.json.message, /alice@example\.com/);
      assert.equal((await denying.anonymous.request('GET', '/metrics')).status, 403);
      assert.equal((await denying.admin.request('GET', '/metrics')).status, 200);
    } finally {
      await denying.close();
    }
  });
});

describe('starting with a bad authentication configuration', () => {
  it('is a start error naming the field', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, config().replace('    audiences: [gatehouse, other-audience]\n', ''));
    await assert.rejects(startTestServer({ flags: ['--authentication-config', bad] }), /jwt\[0\]\.issuer\.audiences: Required value/);
    await assert.rejects(startTestServer({ flags: ['--authentication-config', join(dir, 'missing.yaml')] }), /--authentication-config/);
  });
});
