import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { devPkiPaths } from '../../certs/devpki.js';
import { keyId } from '../../lib/serviceaccount/keys.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { hasKubectl, kubectl, makeJwt, whoAmI, withToken } from './tokenkit.js';
import { eventually } from '../helpers/eventually.js';

const DEV_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const payloadOf = (token: string): Record<string, any> => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()); // eslint-disable-line @typescript-eslint/no-explicit-any
const headerOf = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString());

async function create(s: TestServer, path: string, body: unknown): Promise<Record<string, any>> {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await s.admin.request('POST', path, body);
  assert.equal(r.status, 201, r.text);
  return r.json;
}

async function tokenRequest(s: TestServer, sa: string, spec: Record<string, unknown> = {}, ns = 'default') {
  return s.admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec,
  });
}

/** Claims of a bound token for sa, valid now unless overridden. */
function claims(sa: { name: string; uid: string }, over: Record<string, unknown> = {}, ns = 'default'): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    aud: [DEV_ISSUER],
    exp: now + 600,
    iat: now,
    nbf: now,
    iss: DEV_ISSUER,
    jti: randomUUID(),
    'kubernetes.io': { namespace: ns, serviceaccount: sa },
    sub: `system:serviceaccount:${ns}:${sa.name}`,
    ...over,
  };
}

describe('service-account tokens in dev mode', () => {
  let s: TestServer;
  let devKey: KeyObject;
  let devKid: string;
  let sa1: { name: string; uid: string };
  before(async () => {
    s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
    // The dev PKI's key is ECDSA P-256 (certs/pki.ts): kube-apiserver signs with ES256 for it.
    devKey = createPrivateKey(await readFile(devPkiPaths(s.dataDir).serviceAccountKey, 'utf8'));
    devKid = keyId(createPublicKey(devKey));
    const sa = await create(s, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'sa1' } });
    sa1 = { name: 'sa1', uid: sa.metadata.uid };
    await create(s, '/api/v1/namespaces/default/pods', {
      metadata: { name: 'p1' },
      spec: { serviceAccountName: 'sa1', containers: [{ name: 'c', image: 'busybox' }] },
    });
  });
  after(async () => {
    await s?.close();
  });

  it('says in the startup output that it signs with the dev key and issuer', () => {
    assert.ok(
      s.logs.some((l) => l.includes('dev mode') && l.includes(DEV_ISSUER) && l.includes('sa.key')),
      s.logs.join('\n'),
    );
  });

  it('lists serviceaccounts/token as authentication.k8s.io/v1 TokenRequest in discovery', async () => {
    const r = await s.admin.request('GET', '/api/v1');
    const entry = r.json.resources.find((x: { name: string }) => x.name === 'serviceaccounts/token');
    assert.deepEqual(entry, {
      name: 'serviceaccounts/token',
      singularName: '',
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
  });

  it(
    'kubectl create token with audience, duration and a bound pod writes the claims kube-apiserver writes',
    { skip: hasKubectl ? false : 'kubectl is not installed' },
    async () => {
      const r = await kubectl(
        s,
        undefined,
        ['create', 'token', 'sa1', '--audience', 'x', '--duration', '10m', '--bound-object-kind', 'Pod', '--bound-object-name', 'p1'],
        s.kubeconfig,
      );
      assert.equal(r.code, 0, r.stderr);
      const token = r.stdout.trim();
      const h = headerOf(token);
      assert.deepEqual(h, { alg: 'ES256', kid: devKid });
      const p = payloadOf(token);
      const pod = await s.admin.request('GET', '/api/v1/namespaces/default/pods/p1');
      assert.equal(p.iss, DEV_ISSUER);
      assert.deepEqual(p.aud, ['x']);
      assert.equal(p.sub, 'system:serviceaccount:default:sa1');
      assert.equal(p.exp - p.iat, 600);
      assert.equal(p.nbf, p.iat);
      assert.match(p.jti, /^[0-9a-f-]{36}$/);
      assert.deepEqual(p['kubernetes.io'], { namespace: 'default', pod: { name: 'p1', uid: pod.json.metadata.uid }, serviceaccount: sa1 });
      // Audience x is not the API's: the token is refused here.
      assert.equal((await withToken(s, token)).status, 401);
    },
  );

  it('answers the TokenRequest with status.token and status.expirationTimestamp', async () => {
    const r = await tokenRequest(s, 'sa1', { expirationSeconds: 3600 });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.apiVersion, 'authentication.k8s.io/v1');
    assert.equal(r.json.kind, 'TokenRequest');
    assert.deepEqual(r.json.spec.audiences, [DEV_ISSUER]);
    const exp = payloadOf(r.json.status.token).exp;
    assert.equal(r.json.status.expirationTimestamp, new Date(exp * 1000).toISOString().replace('.000Z', 'Z'));
  });

  it('a created token authenticates as the service account, with kubectl --token too', async () => {
    const token = (await tokenRequest(s, 'sa1')).json.status.token as string;
    assert.equal((await withToken(s, token)).status, 200);
    const who = await whoAmI(s, token);
    if (who.username !== undefined) {
      assert.equal(who.username, 'system:serviceaccount:default:sa1');
      assert.deepEqual(who.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
      assert.equal(who.uid, sa1.uid);
      assert.deepEqual(who.extra?.['authentication.kubernetes.io/credential-id'], [`JTI=${payloadOf(token).jti}`]);
    }
    if (hasKubectl) {
      const r = await kubectl(s, token, ['get', '--raw', '/api/v1/namespaces/default/serviceaccounts/sa1']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).metadata.uid, sa1.uid);
      const w = await kubectl(s, token, ['auth', 'whoami', '-o', 'json']);
      assert.equal(w.code, 0, w.stderr);
      assert.equal(JSON.parse(w.stdout).status.userInfo.username, 'system:serviceaccount:default:sa1');
    }
  });

  it('a pod-bound token carries the pod in extra and is refused once the pod is deleted', async () => {
    const pod = await create(s, '/api/v1/namespaces/default/pods', {
      metadata: { name: 'p2' },
      spec: { serviceAccountName: 'sa1', containers: [{ name: 'c', image: 'busybox' }] },
    });
    const r = await tokenRequest(s, 'sa1', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p2' } });
    assert.equal(r.status, 201, r.text);
    const token = r.json.status.token as string;
    assert.equal((await withToken(s, token)).status, 200);
    const who = await whoAmI(s, token);
    if (who.extra) {
      assert.deepEqual(who.extra['authentication.kubernetes.io/pod-name'], ['p2']);
      assert.deepEqual(who.extra['authentication.kubernetes.io/pod-uid'], [pod.metadata.uid]);
    }
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/default/pods/p2')).status, 200);
    assert.equal((await withToken(s, token)).status, 401);
  });

  it('a token is refused once its service account is deleted, and stays refused when one of the same name comes back', async () => {
    await create(s, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'gone' } });
    const token = (await tokenRequest(s, 'gone')).json.status.token as string;
    assert.equal((await withToken(s, token)).status, 200);
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/gone')).status, 200);
    const r = await withToken(s, token);
    assert.equal(r.status, 401);
    assert.equal(r.json.reason, 'Unauthorized');
    await create(s, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'gone' } });
    assert.equal((await withToken(s, token)).status, 401);
  });

  it('refuses bad TokenRequests as kube-apiserver does', async () => {
    const short = await tokenRequest(s, 'sa1', { expirationSeconds: 60 });
    assert.equal(short.status, 422);
    assert.match(short.json.message, /spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes/);
    assert.equal((await tokenRequest(s, 'nobody')).status, 404);
    const missingPod = await tokenRequest(s, 'sa1', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'nope' } });
    assert.equal(missingPod.status, 404);
    const kind = await tokenRequest(s, 'sa1', { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } });
    assert.equal(kind.status, 400);
    const uid = await tokenRequest(s, 'sa1', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'not-the-uid' } });
    assert.equal(uid.status, 409);
    await create(s, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'other' } });
    const wrongSa = await tokenRequest(s, 'other', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1' } });
    assert.equal(wrongSa.status, 400);
  });

  it('accepts a hand-made token signed by the dev key, the baseline of the attacks below', async () => {
    assert.equal((await withToken(s, makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1), devKey))).status, 200);
    assert.equal((await withToken(s, makeJwt({ alg: 'ES256' }, claims(sa1), devKey))).status, 200);
  });

  describe('attacks, each a 401 and never a crash', () => {
    const refuse = async (token: string): Promise<void> => {
      const r = await withToken(s, token);
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json.kind, 'Status');
      assert.equal(r.json.message, 'Unauthorized');
    };
    it('alg none', async () => {
      await refuse(makeJwt({ alg: 'none', kid: devKid }, claims(sa1)));
      await refuse(makeJwt({ alg: 'none' }, claims(sa1)).replace(/\.[^.]*$/, '.'));
    });
    it('HS256 signed with the public key as the secret', async () => {
      const pem = createPublicKey(devKey).export({ type: 'spki', format: 'pem' });
      await refuse(makeJwt({ alg: 'HS256', kid: devKid }, claims(sa1), Buffer.from(pem)));
      await refuse(makeJwt({ alg: 'HS256' }, claims(sa1), createPublicKey(devKey).export({ type: 'spki', format: 'der' })));
    });
    it("unknown kid, and a known kid on another key's signature", async () => {
      const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      await refuse(makeJwt({ alg: 'ES256', kid: 'unknown' }, claims(sa1), devKey));
      await refuse(makeJwt({ alg: 'ES256', kid: keyId(createPublicKey(other)) }, claims(sa1), other));
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1), other));
      await refuse(makeJwt({ alg: 'ES256' }, claims(sa1), other));
    });
    it('expired and not yet valid', async () => {
      const now = Math.floor(Date.now() / 1000);
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1, { exp: now - 3600, iat: now - 7200, nbf: now - 7200 }), devKey));
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1, { nbf: now + 3600, iat: now }), devKey));
      const { exp: _e, ...noExp } = claims(sa1);
      void _e;
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, noExp, devKey));
    });
    it('wrong iss and wrong aud', async () => {
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1, { iss: 'https://evil.example' }), devKey));
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1, { aud: ['https://evil.example'] }), devKey));
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1, { aud: 42 }), devKey));
    });
    it('a claim naming another service account than sub, or a wrong uid', async () => {
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1, { sub: 'system:serviceaccount:kube-system:admin' }), devKey));
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims({ name: 'sa1', uid: randomUUID() }), devKey));
    });
    it('header and payload not JSON', async () => {
      await refuse(makeJwt('{not json', claims(sa1), devKey));
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, '[1,2', devKey));
      await refuse('a.b.c');
      await refuse('....');
    });
    it('a 1 MiB token', async () => {
      await refuse('a'.repeat(1 << 20));
      // Just under 1 MiB and a real signed JWT: refused by its size before any parsing.
      await refuse(makeJwt({ alg: 'ES256', kid: devKid }, claims(sa1, { pad: 'x'.repeat(760_000) }), devKey));
      // The server is still serving.
      assert.equal((await s.admin.request('GET', '/readyz')).status, 200);
    });
  });

  it('fills a legacy kubernetes.io/service-account-token secret whose token verifies until the secret is deleted', async () => {
    const sa = await create(s, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'legacy' } });
    await create(s, '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'legacy-token', annotations: { 'kubernetes.io/service-account.name': 'legacy' } },
      type: 'kubernetes.io/service-account-token',
    });
    let secret: Record<string, any> = {}; // eslint-disable-line @typescript-eslint/no-explicit-any
    await eventually('the token controller to fill the secret', async () => {
      secret = (await s.admin.request('GET', '/api/v1/namespaces/default/secrets/legacy-token')).json;
      return typeof secret.data?.token === 'string';
    });
    const token = Buffer.from(secret.data.token, 'base64').toString();
    assert.equal(Buffer.from(secret.data.namespace, 'base64').toString(), 'default');
    assert.match(Buffer.from(secret.data['ca.crt'], 'base64').toString(), /BEGIN CERTIFICATE/);
    assert.equal(secret.metadata.annotations['kubernetes.io/service-account.uid'], sa.metadata.uid);
    const p = payloadOf(token);
    assert.equal(p.iss, 'kubernetes/serviceaccount');
    assert.equal(p['kubernetes.io/serviceaccount/service-account.uid'], sa.metadata.uid);
    assert.equal(p['kubernetes.io/serviceaccount/secret.name'], 'legacy-token');
    assert.equal((await withToken(s, token)).status, 200);
    const who = await whoAmI(s, token);
    if (who.username !== undefined) assert.equal(who.username, 'system:serviceaccount:default:legacy');
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/default/secrets/legacy-token')).status, 200);
    assert.equal((await withToken(s, token)).status, 401);
  });

  it('deletes a legacy token secret whose service account is deleted', async () => {
    await create(s, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'short-lived' } });
    await create(s, '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'short-lived-token', annotations: { 'kubernetes.io/service-account.name': 'short-lived' } },
      type: 'kubernetes.io/service-account-token',
    });
    await eventually(
      'condition',
      async () => typeof (await s.admin.request('GET', '/api/v1/namespaces/default/secrets/short-lived-token')).json?.data?.token === 'string',
    );
    await s.admin.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/short-lived');
    await eventually('the secret to go', async () => (await s.admin.request('GET', '/api/v1/namespaces/default/secrets/short-lived-token')).status === 404);
  });
});

describe('service-account tokens with ECDSA signing and several key files', () => {
  let s: TestServer;
  let dir: string;
  let oldRsa: KeyObject;
  let sa: { name: string; uid: string };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-sakeys-'));
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    oldRsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const unrelated = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey;
    await writeFile(join(dir, 'ec.key'), ec.privateKey.export({ type: 'sec1', format: 'pem' }));
    await writeFile(join(dir, 'ec.pub'), ec.publicKey.export({ type: 'spki', format: 'pem' }));
    // One file, several keys: an RSA private key (PKCS#1) and an unrelated P-384 public key.
    await writeFile(
      join(dir, 'multi.pem'),
      `${oldRsa.export({ type: 'pkcs1', format: 'pem' }) as string}${unrelated.export({ type: 'spki', format: 'pem' }) as string}`,
    );
    s = await startTestServer({
      flags: [
        '--authorization-mode=AlwaysAllow',
        '--service-account-signing-key-file',
        join(dir, 'ec.key'),
        '--service-account-issuer',
        'https://issuer.example',
        '--service-account-issuer',
        'https://old-issuer.example',
        '--service-account-key-file',
        join(dir, 'ec.pub'),
        '--service-account-key-file',
        join(dir, 'multi.pem'),
        '--api-audiences',
        'api,other-api',
        '--service-account-max-token-expiration',
        '1h',
      ],
    });
    const obj = await create(s, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'robot' } });
    sa = { name: 'robot', uid: obj.metadata.uid };
  });
  after(async () => {
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('signs with ES256 by the first issuer, defaults to the API audiences and caps the lifetime', async () => {
    assert.ok(!s.logs.some((l) => l.includes('dev mode')));
    const r = await tokenRequest(s, 'robot', { expirationSeconds: 7200 });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.spec.expirationSeconds, 3600);
    const token = r.json.status.token as string;
    assert.equal(headerOf(token)['alg'], 'ES256');
    const p = payloadOf(token);
    assert.equal(p.iss, 'https://issuer.example');
    assert.deepEqual(p.aud, ['api', 'other-api']);
    assert.equal(p.exp - p.iat, 3600);
    assert.equal((await withToken(s, token)).status, 200);
  });

  it('verifies a token of the second issuer signed by a key from the second key file', async () => {
    const now = Math.floor(Date.now() / 1000);
    const c = claims(sa, { iss: 'https://old-issuer.example', aud: ['other-api'], exp: now + 600 });
    assert.equal((await withToken(s, makeJwt({ alg: 'RS256', kid: keyId(createPublicKey(oldRsa)) }, c, oldRsa))).status, 200);
    assert.equal((await withToken(s, makeJwt({ alg: 'RS256' }, c, oldRsa))).status, 200);
  });

  it('refuses the issuer as audience when --api-audiences names others, and algorithms the keys do not allow', async () => {
    const c = claims(sa, { iss: 'https://issuer.example', aud: ['https://issuer.example'] });
    assert.equal((await withToken(s, makeJwt({ alg: 'RS256' }, c, oldRsa))).status, 401);
    const ok = claims(sa, { iss: 'https://issuer.example', aud: ['api'] });
    assert.equal((await withToken(s, makeJwt({ alg: 'ES384' }, ok, oldRsa))).status, 401);
  });

  it('refuses a token of the dev issuer, which this server does not use', async () => {
    const c = claims(sa);
    assert.equal((await withToken(s, makeJwt({ alg: 'RS256' }, c, oldRsa))).status, 401);
  });
});

describe('service-account key problems at start', () => {
  it('names the flag and the file of a key file without keys', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-sakeys-'));
    try {
      const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      await writeFile(join(dir, 'sa.key'), key);
      await writeFile(join(dir, 'empty.pem'), 'nothing here\n');
      await assert.rejects(
        startTestServer({
          dataDir: dir,
          flags: [
            '--service-account-signing-key-file',
            join(dir, 'sa.key'),
            '--service-account-issuer',
            'https://i',
            '--service-account-key-file',
            join(dir, 'empty.pem'),
          ],
        }),
        (e: Error) => {
          assert.equal(
            e.message,
            `invalid value "${join(dir, 'empty.pem')}" for --service-account-key-file: no PEM public key, private key or certificate found`,
          );
          return true;
        },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
