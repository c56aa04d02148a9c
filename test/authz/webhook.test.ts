// The webhook authorizer against a real HTTPS webhook: allow, no opinion,
// denied, garbage, errors and a hanging peer, under each failure policy, with
// match conditions, in both SubjectAccessReview versions.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { clientAs } from './kit.js';
import { startWebhookPeer, type WebhookPeer } from './webhookpeer.js';

async function status(srv: TestServer, user: string, path: string): Promise<number> {
  const c = await clientAs(srv, user, ['dev']);
  try {
    return (await c.request('GET', path)).status;
  } finally {
    c.close();
  }
}

describe('the webhook authorizer from flags', () => {
  let dir: string;
  let peer: WebhookPeer;
  let srv: TestServer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-authz-webhook-'));
    peer = await startWebhookPeer();
    srv = await startTestServer({
      flags: ['--authorization-mode=Webhook,AlwaysAllow', `--authorization-webhook-config-file=${await peer.kubeconfig(dir, 'flags')}`],
    });
  });
  after(async () => {
    await srv?.close();
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("sends a v1beta1 review with the user's groups as spec.group and caches the answer", async () => {
    const before = peer.received.length;
    assert.equal(await status(srv, 'deny-flag', '/api/v1/namespaces/default/configmaps/x'), 403);
    assert.equal(await status(srv, 'deny-flag', '/api/v1/namespaces/default/configmaps/x'), 403);
    const sent = peer.received.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.apiVersion, 'authorization.k8s.io/v1beta1');
    assert.deepEqual(sent[0]!.spec['group'], ['dev', 'system:authenticated']);
    assert.equal(sent[0]!.spec['groups'], undefined);
    assert.deepEqual(sent[0]!.spec['resourceAttributes'], { namespace: 'default', verb: 'get', version: 'v1', resource: 'configmaps', name: 'x' });
  });

  it('asks again for every request whose review would differ, and answers a repeat from the cache', async () => {
    const before = peer.received.length;
    const paths = [
      '/api/v1/namespaces/default/configmaps/cache-a',
      '/api/v1/namespaces/default/configmaps/cache-b',
      '/api/v1/namespaces/kube-system/configmaps/cache-a',
      '/api/v1/namespaces/default/secrets/cache-a',
      '/api/v1/namespaces/default/pods/cache-a/log',
      '/api/v1/namespaces/default/pods?labelSelector=app%3Dweb',
      '/api/v1/namespaces/default/pods?labelSelector=app%3Ddb',
      '/cache-a',
      '/cache-b',
    ];
    for (const p of paths) assert.equal(await status(srv, 'deny-cache', p), 403);
    assert.equal(peer.received.length - before, paths.length);
    // Another user with the same request is asked too; then every one of them again is answered from the cache.
    assert.equal(await status(srv, 'deny-cache-2', paths[0]!), 403);
    assert.equal(peer.received.length - before, paths.length + 1);
    for (const p of paths) await status(srv, 'deny-cache', p);
    assert.equal(await status(srv, 'deny-cache-2', paths[0]!), 403);
    assert.equal(peer.received.length - before, paths.length + 1);
  });

  it('passes non-resource requests as nonResourceAttributes', async () => {
    const before = peer.received.length;
    assert.equal(await status(srv, 'allow-path', '/version'), 200);
    assert.deepEqual(peer.received[before]!.spec['nonResourceAttributes'], { path: '/version', verb: 'get' });
  });

  it('sends the field and label selectors of a list as requirements', async () => {
    const before = peer.received.length;
    const path = '/api/v1/namespaces/default/pods?labelSelector=app%3Dweb,tier%20notin%20(db),!legacy&fieldSelector=spec.nodeName%3Dn1';
    assert.equal(await status(srv, 'allow-selectors', path), 200);
    const ra = peer.received[before]!.spec['resourceAttributes'] as Record<string, unknown>;
    assert.deepEqual(ra['fieldSelector'], { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] });
    assert.deepEqual(ra['labelSelector'], {
      requirements: [
        { key: 'app', operator: 'In', values: ['web'] },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'tier', operator: 'NotIn', values: ['db'] },
      ],
    });
  });

  it("treats allowed:false as no opinion, and garbage, errors and wrong versions as no opinion (the flag webhook's policy)", async () => {
    for (const user of ['pass-flag', 'garbage-flag', '500-flag', 'wrongversion-flag']) {
      assert.equal(await status(srv, user, '/api/v1/namespaces'), 200, user);
    }
    assert.ok(srv.logs.some((l) => l.includes('authorization webhook "webhook" failed (failure policy NoOpinion)')));
  });

  it('lets denied:true end the chain before later authorizers', async () => {
    assert.equal(await status(srv, 'deny-2', '/api/v1/namespaces'), 403);
  });
});

describe('a failing webhook that no later authorizer overrides (--authorization-mode=Webhook alone)', () => {
  let dir: string;
  let peer: WebhookPeer;
  let srv: TestServer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-authz-webhook-'));
    peer = await startWebhookPeer();
    srv = await startTestServer({
      flags: [
        '--authorization-mode=Webhook',
        `--authorization-webhook-config-file=${await peer.kubeconfig(dir, 'alone')}`,
        '--authorization-webhook-version=v1',
      ],
    });
  });
  after(async () => {
    await srv?.close();
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers 500 with an InternalError Status, as kube-apiserver's authorization filter, and never says why beyond the webhook's name", async () => {
    for (const user of ['garbage-x', '500-x', 'wrongversion-x']) {
      const c = await clientAs(srv, user, ['dev']);
      const r = await c.request('GET', '/api/v1/namespaces');
      c.close();
      assert.equal(r.status, 500, `${user}: ${r.text}`);
      assert.equal(r.json.reason, 'InternalError');
      assert.equal(r.json.message, 'Internal error occurred: authorization webhook "webhook" failed');
    }
  });

  it('a webhook that answers keeps 403 for no opinion and for a denial, and the system:masters bypass still allows', async () => {
    assert.equal(await status(srv, 'pass-x', '/api/v1/namespaces'), 403);
    assert.equal(await status(srv, 'deny-x', '/api/v1/namespaces'), 403);
    assert.equal(await status(srv, 'allow-x', '/api/v1/namespaces'), 200);
    assert.equal((await srv.admin.request('GET', '/api/v1/namespaces')).status, 200);
  });

  it('a SubjectAccessReview reports the failure in status.evaluationError', async () => {
    const r = await srv.admin.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'garbage-review', groups: ['dev'], resourceAttributes: { verb: 'list', resource: 'namespaces', version: 'v1' } },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.allowed, false);
    assert.equal(r.json.status.evaluationError, 'authorization webhook "webhook" failed');
  });
});

describe('webhooks from an authorization configuration file', () => {
  let dir: string;
  let peer: WebhookPeer;
  let srv: TestServer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-authz-webhook-'));
    peer = await startWebhookPeer();
    const kc = await peer.kubeconfig(dir, 'file');
    const webhook = (name: string, failurePolicy: string, matchConditions: string[]) => ({
      type: 'Webhook',
      name,
      webhook: {
        timeout: '1s',
        failurePolicy,
        subjectAccessReviewVersion: 'v1',
        matchConditionSubjectAccessReviewVersion: 'v1',
        connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kc },
        matchConditions: matchConditions.map((expression) => ({ expression })),
        authorizedTTL: '1ms',
        unauthorizedTTL: '1ms',
      },
    });
    const config = {
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthorizationConfiguration',
      authorizers: [
        webhook('guard-deny', 'Deny', ["request.user.startsWith('mc-')", "request.resourceAttributes.namespace == 'guarded'"]),
        webhook('guard-open', 'NoOpinion', ["request.user.startsWith('mo-')", "request.resourceAttributes.namespace == 'guarded'"]),
        webhook('strict', 'Deny', ["request.user.startsWith('strict-')"]),
        webhook('lenient', 'NoOpinion', ["request.user != 'skip-me'", "!request.user.startsWith('m')"]),
        { type: 'AlwaysAllow', name: 'fallback' },
      ],
    };
    const file = join(dir, 'authz.yaml');
    await writeFile(file, JSON.stringify(config));
    srv = await startTestServer({ flags: [`--authorization-config=${file}`] });
  });
  after(async () => {
    await srv?.close();
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const cases: Array<[string, string, string, number]> = [
    ['an allowing webhook allows', 'strict-allow', '/api/v1/namespaces', 200],
    ['a denying webhook denies', 'strict-deny', '/api/v1/namespaces', 403],
    ['garbage under failurePolicy Deny is an authorizer error: 500', 'strict-garbage', '/api/v1/namespaces', 500],
    ['an HTTP error under failurePolicy Deny is an authorizer error: 500', 'strict-500', '/api/v1/namespaces', 500],
    ['a hanging webhook under failurePolicy Deny is an authorizer error after its timeout: 500', 'strict-hang', '/api/v1/namespaces', 500],
    ['allowed:false under failurePolicy Deny is still no opinion', 'strict-pass', '/api/v1/namespaces', 200],
    ['garbage under failurePolicy NoOpinion lets later authorizers decide', 'garbage-1', '/api/v1/namespaces', 200],
    ['a hanging webhook under failurePolicy NoOpinion lets later authorizers decide', 'hang-1', '/api/v1/namespaces', 200],
    ['denied:true from a NoOpinion webhook still denies', 'deny-1', '/api/v1/namespaces', 403],
    ['a false match condition skips the webhook', 'mdeny', '/api/v1/namespaces', 200],
    ['a match condition error under Deny is an authorizer error: 500', 'mc-allow', '/version', 500],
    ['a false match condition under Deny skips', 'mc-deny', '/api/v1/namespaces/other/configmaps', 200],
    ['true match conditions call the webhook', 'mc-deny', '/api/v1/namespaces/guarded/configmaps', 403],
    ['a match condition error under NoOpinion skips the webhook', 'mo-deny', '/version', 200],
  ];
  for (const [name, user, path, want] of cases) {
    it(name, async () => assert.equal(await status(srv, user, path), want));
  }

  it('does not call a webhook whose match conditions are false or fail', async () => {
    const before = peer.received.length;
    assert.equal(await status(srv, 'skip-me', '/api/v1/namespaces'), 200);
    assert.equal(await status(srv, 'mo-x', '/version'), 200);
    assert.equal(peer.received.length, before);
  });

  it('sends v1 reviews with spec.groups', async () => {
    const before = peer.received.length;
    await status(srv, 'strict-allow-v1', '/api/v1/namespaces');
    assert.equal(peer.received[before]!.apiVersion, 'authorization.k8s.io/v1');
    assert.deepEqual(peer.received[before]!.spec['groups'], ['dev', 'system:authenticated']);
  });

  it('counts decisions per authorizer and match condition errors', async () => {
    const text = (await srv.admin.request('GET', '/metrics')).text;
    assert.match(text, /apiserver_authorization_decisions_total\{type="Webhook",name="strict",decision="denied"\} [1-9]/);
    assert.match(text, /apiserver_authorization_decisions_total\{type="AlwaysAllow",name="fallback",decision="allowed"\} [1-9]/);
    assert.match(text, /apiserver_authorization_match_condition_evaluation_errors_total\{type="Webhook",name="guard-deny"\} [1-9]/);
    assert.match(text, /apiserver_authorization_webhook_evaluations_total\{name="strict",result="timeout"\} [1-9]/);
    assert.match(text, /apiserver_authorization_webhook_duration_seconds_count\{name="strict",result="timeout"\} [1-9]/);
    assert.match(text, /apiserver_authorization_webhook_duration_seconds_bucket\{le="10",name="strict",result="success"\} [1-9]/);
  });
});
