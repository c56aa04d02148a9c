// The reviews the gateway answers itself are admitted as kube admits a REST
// creater's create: a validating webhook and a ValidatingAdmissionPolicy
// naming subjectaccessreviews are called with the review and can deny it, a
// mutating webhook can change its spec before it is answered, dry-run is
// passed on, and a review nothing names is answered as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startWebhookServer, type WebhookServer } from './webhookserver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ADM = '/apis/admissionregistration.k8s.io/v1';
const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const SAR_RULES = [{ operations: ['CREATE'], apiGroups: ['authorization.k8s.io'], apiVersions: ['v1'], resources: ['subjectaccessreviews'] }];

const sar = (user: string, groups: string[] = []) => ({
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SubjectAccessReview',
  spec: { user, groups, resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: 'default' } },
});

describe('admission of the reviews the gateway answers', () => {
  let s: TestServer;
  let hooks: WebhookServer;

  async function configure(kind: 'validating' | 'mutating', name: string): Promise<string> {
    const plural = `${kind}webhookconfigurations`;
    const r = await s.admin.request('POST', `${ADM}/${plural}`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: kind === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          name,
          clientConfig: { url: hooks.url(`/${name}`), caBundle: hooks.caBundle },
          rules: SAR_RULES,
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    assert.equal(r.status, 201, r.text);
    return `${ADM}/${plural}/${name}`;
  }

  before(async () => {
    hooks = await startWebhookServer();
    s = await startTestServer({ flags: ['--authorization-mode=RBAC'] });
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  it('a validating webhook is called with the SubjectAccessReview (dry-run too) and its denial is the answer', async () => {
    hooks.answers.set('/deny-sar.example.com', { kind: 'deny', message: 'no reviews for mallory' });
    const path = await configure('validating', 'deny-sar.example.com');
    const r = await eventually('the webhook in force', async () => {
      const c = await s.admin.request('POST', SAR, sar('mallory'));
      return c.status !== 201 && c;
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.message, 'admission webhook "deny-sar.example.com" denied the request: no reviews for mallory');
    const q = hooks.received('/deny-sar.example.com').at(-1)!.request;
    assert.deepEqual(q.kind, { group: 'authorization.k8s.io', version: 'v1', kind: 'SubjectAccessReview' });
    assert.deepEqual(q.resource, { group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' });
    assert.equal(q.operation, 'CREATE');
    assert.equal(q.userInfo.username, 'admin');
    assert.equal(q.object.spec.user, 'mallory');
    assert.equal(q.object.status, undefined);
    assert.equal(q.dryRun, false);
    assert.equal(q.options.kind, 'CreateOptions');
    assert.equal((await s.admin.request('POST', `${SAR}?dryRun=All`, sar('mallory'))).status, 400);
    assert.equal(hooks.received('/deny-sar.example.com').at(-1)!.request.dryRun, true);
    // A review the configuration does not name is answered as before.
    const self = await s.admin.request('POST', SSAR, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    });
    assert.equal(self.status, 201, self.text);
    assert.equal(self.json.status.allowed, true);
    assert.equal((await s.admin.request('DELETE', path)).status, 200);
    await eventually('the webhook gone', async () => (await s.admin.request('POST', SAR, sar('mallory'))).status === 201);
  });

  it('a mutating webhook changes the review before it is answered', async () => {
    hooks.answers.set('/masters.example.com', { kind: 'patch', ops: [{ op: 'replace', path: '/spec/groups', value: ['system:masters'] }] });
    const before = await s.admin.request('POST', SAR, sar('eve'));
    assert.equal(before.status, 201, before.text);
    assert.equal(before.json.status.allowed, false);
    const path = await configure('mutating', 'masters.example.com');
    const r = await eventually('the webhook in force', async () => {
      const c = await s.admin.request('POST', SAR, sar('eve'));
      return c.status === 201 && c.json.status.allowed === true && c;
    });
    assert.deepEqual(r.json.spec.groups, ['system:masters']);
    assert.equal(hooks.received('/masters.example.com').at(-1)!.request.object.spec.groups.length, 0);
    assert.equal((await s.admin.request('DELETE', path)).status, 200);
  });

  it('a ValidatingAdmissionPolicy denies a SubjectAccessReview with kube’s text', async () => {
    const policy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'no-root-reviews.example.com' },
      spec: {
        matchConstraints: { resourceRules: SAR_RULES },
        validations: [{ expression: "object.spec.user != 'root'", message: 'nobody asks about root' }],
      },
    };
    assert.equal((await s.admin.request('POST', `${ADM}/validatingadmissionpolicies`, policy)).status, 201);
    const binding = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'no-root-b' },
      spec: { policyName: 'no-root-reviews.example.com', validationActions: ['Deny'] },
    };
    assert.equal((await s.admin.request('POST', `${ADM}/validatingadmissionpolicybindings`, binding)).status, 201);
    const r: Json = await eventually('the policy in force', async () => {
      const c = await s.admin.request('POST', SAR, sar('root'));
      return c.status !== 201 && c;
    });
    // kube's admission.NewForbidden names a nameless object "Unknown"; a validation without a reason is Invalid.
    assert.equal(r.status, 422, r.text);
    assert.equal(
      r.json.message,
      `subjectaccessreviews.authorization.k8s.io "Unknown" is forbidden: ValidatingAdmissionPolicy 'no-root-reviews.example.com' with binding 'no-root-b' denied request: nobody asks about root`,
    );
    assert.equal((await s.admin.request('POST', SAR, sar('alice'))).status, 201);
  });

  it('a LocalSubjectAccessReview is admitted without revealing whether its namespace exists', async () => {
    const ns = 'no-such-namespace';
    const lsar = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'LocalSubjectAccessReview',
      spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods', namespace: ns } },
    };
    const r = await s.admin.request('POST', `/apis/authorization.k8s.io/v1/namespaces/${ns}/localsubjectaccessreviews`, lsar);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.allowed, false);
  });
});
