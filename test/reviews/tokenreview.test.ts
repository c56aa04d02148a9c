import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { devPkiPaths } from '../../certs/devpki.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { sendJson, startHttpsPeer, tokenReviewAnswer, type HttpsPeer, type PeerRequest } from '../authn/fixtures.js';

const run = promisify(execFile);
const AUDIENCE = 'https://gatehouse.test';

function tokenService(r: PeerRequest, res: ServerResponse): void {
  const review = r.json as { apiVersion: string; spec: { token: string } };
  if (review.spec.token === 'aud-token') {
    return sendJson(res, 200, tokenReviewAnswer(review, { authenticated: true, user: { username: 'aud-user' }, audiences: ['b', 'c'] }));
  }
  sendJson(res, 200, tokenReviewAnswer(review, { authenticated: false, error: 'unknown token' }));
}

let dir = '';
let peer: HttpsPeer;
let s: TestServer;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-tokenreview-'));
  peer = await startHttpsPeer(tokenService);
  const tokens = join(dir, 'tokens.csv');
  await writeFile(tokens, 'static-token,alice,uid-alice,"dev,ops"\n');
  const webhook = join(dir, 'webhook.kubeconfig');
  await writeFile(
    webhook,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'w',
      clusters: [{ name: 'w', cluster: { server: peer.url, 'certificate-authority-data': Buffer.from(peer.ca.certPem).toString('base64') } }],
      users: [{ name: 'w', user: {} }],
      contexts: [{ name: 'w', context: { cluster: 'w', user: 'w' } }],
    }),
  );
  s = await startTestServer({ flags: [`--token-auth-file=${tokens}`, `--api-audiences=${AUDIENCE}`, `--authentication-token-webhook-config-file=${webhook}`] });
});
after(async () => {
  await s?.close();
  await peer?.close();
  await rm(dir, { recursive: true, force: true });
});

const review = (version: string, spec: Record<string, unknown>) =>
  s.admin.request('POST', `/apis/authentication.k8s.io/${version}/tokenreviews`, { apiVersion: `authentication.k8s.io/${version}`, kind: 'TokenReview', spec });

describe('TokenReview', () => {
  it('authenticates a valid token and answers in v1 with the user and the API audiences', async () => {
    const r = await review('v1', { token: 'static-token' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.apiVersion, 'authentication.k8s.io/v1');
    assert.equal(r.json.kind, 'TokenReview');
    assert.deepEqual(r.json.status, {
      authenticated: true,
      user: { username: 'alice', uid: 'uid-alice', groups: ['dev', 'ops', 'system:authenticated'] },
      audiences: [AUDIENCE],
    });
  });

  it('answers a v1beta1 request in v1beta1', async () => {
    const r = await review('v1beta1', { token: 'static-token' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.apiVersion, 'authentication.k8s.io/v1beta1');
    assert.equal(r.json.status.authenticated, true);
  });

  it('reports an unknown token as not authenticated with an error', async () => {
    const r = await review('v1', { token: 'nobody-knows-this' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.authenticated, false);
    assert.equal(r.json.status.user, undefined);
    assert.match(r.json.status.error, /unknown token/);
    assert.doesNotMatch(r.json.status.error, /nobody-knows-this/);
  });

  it('refuses a token that is not valid for any requested audience', async () => {
    const r = await review('v1', { token: 'static-token', audiences: ['someone-else'] });
    assert.equal(r.json.status.authenticated, false);
    assert.match(r.json.status.error, /invalid for the target audiences/);
  });

  it("answers the intersection of the requested audiences and the token's", async () => {
    const r = await review('v1', { token: 'aud-token', audiences: ['a', 'b'] });
    assert.equal(r.json.status.authenticated, true, r.text);
    assert.deepEqual(r.json.status.audiences, ['b']);
    assert.deepEqual(peer.requests.at(-1)!.json.spec.audiences, ['a', 'b']);
  });

  it('needs spec.token', async () => {
    const r = await review('v1', {});
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.equal(r.json.message, 'token is required for TokenReview in authentication');
  });

  it('refuses a body of another kind or apiVersion', async () => {
    const kind = await s.admin.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'Pod',
      spec: { token: 'x' },
    });
    assert.equal(kind.status, 400);
    const version = await s.admin.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1beta1',
      kind: 'TokenReview',
      spec: { token: 'x' },
    });
    assert.equal(version.status, 400);
    assert.match(version.json.message, /does not match the expected API version/);
  });

  it('is create-only', async () => {
    assert.equal((await s.admin.request('GET', '/apis/authentication.k8s.io/v1/tokenreviews')).status, 405);
    assert.equal((await s.admin.request('GET', '/apis/authentication.k8s.io/v1/tokenreviews/x')).status, 405);
    assert.equal((await s.admin.request('POST', '/apis/authentication.k8s.io/v1/namespaces/default/tokenreviews', {})).status, 404);
  });

  it('is authorized like any create: anonymous is forbidden under AlwaysDeny', async () => {
    const r = await s.anonymous.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'static-token' },
    });
    assert.equal(r.status, 403);
  });

  it('works from curl', async () => {
    const pki = devPkiPaths(s.dataDir);
    const { stdout } = await run('curl', [
      '-sS',
      '--cacert',
      pki.caCert,
      '--cert',
      pki.adminCert,
      '--key',
      pki.adminKey,
      '-H',
      'Content-Type: application/json',
      '-X',
      'POST',
      '--data',
      JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'static-token' } }),
      `${s.url}/apis/authentication.k8s.io/v1/tokenreviews`,
    ]);
    const out = JSON.parse(stdout);
    assert.equal(out.status.authenticated, true);
    assert.equal(out.status.user.username, 'alice');
  });

  it('works from kubectl create -f', async () => {
    const file = join(dir, 'review.yaml');
    await writeFile(file, stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'static-token' } }));
    const { stdout } = await run('kubectl', ['--kubeconfig', s.kubeconfig, 'create', '--validate=false', '-f', file, '-o', 'json']);
    assert.equal(JSON.parse(stdout).status.user.username, 'alice');
  });

  it('is listed by discovery as a create-only type in v1 and v1beta1', async () => {
    for (const version of ['v1', 'v1beta1']) {
      const r = await s.admin.request('GET', `/apis/authentication.k8s.io/${version}`);
      assert.equal(r.status, 200);
      const entry = r.json.resources.find((x: { name: string }) => x.name === 'tokenreviews');
      assert.deepEqual(entry, { name: 'tokenreviews', singularName: 'tokenreview', namespaced: false, kind: 'TokenReview', verbs: ['create'] });
    }
  });
});
