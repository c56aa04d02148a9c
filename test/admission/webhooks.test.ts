// Admission webhooks end to end: a started server calling real HTTPS
// webhooks (webhookserver.ts, their own CA) for ConfigMap and Pod writes.
// Validating webhooks (denials, codes, parallel calls, both failure policies
// with a webhook that is down, slow, or answers wrongly), mutating webhooks
// (JSONPatch add, replace, remove, a forbidden change, invalid patches,
// reinvocation), rules, selectors, dry run, a Service reference, warnings,
// metrics — and nothing stored half-way.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startTestServer, freePort, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { startWebhookServer, type Answer, type WebhookServer } from './webhookserver.js';
import { generateCa } from '../../certs/pki.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ADM = '/apis/admissionregistration.k8s.io/v1';
const CM = (ns = 'default') => `/api/v1/namespaces/${ns}/configmaps`;
let seq = 0;
const unique = (p: string) => `${p}-${++seq}`;
const configMap = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data: { a: '1' },
});

interface HookSpec {
  name: string;
  path?: string;
  url?: string;
  rules?: Json[];
  extra?: Json;
}

function webhook(hooks: WebhookServer, h: HookSpec): Json {
  return {
    name: h.name,
    clientConfig: { url: h.url ?? hooks.url(h.path ?? `/${h.name}`), caBundle: hooks.caBundle },
    rules: h.rules ?? [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...h.extra,
  };
}

describe('admission webhooks', () => {
  let s: TestServer;
  let hooks: WebhookServer;
  const created: string[] = [];

  async function configure(kind: 'validating' | 'mutating', specs: HookSpec[]): Promise<string> {
    const name = unique(kind);
    const plural = `${kind}webhookconfigurations`;
    const r = await s.admin.request('POST', `${ADM}/${plural}`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: kind === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks: specs.map((h) => webhook(hooks, h)),
    });
    assert.equal(r.status, 201, r.text);
    created.push(`${ADM}/${plural}/${name}`);
    return name;
  }

  /** Creates ConfigMaps until the awaited webhook sees one (a configuration applies through a watch). */
  async function inForce(path: string, ns = 'default'): Promise<void> {
    await eventually(`webhook ${path} in force`, async () => {
      await s.admin.request('POST', `${CM(ns)}?dryRun=All`, configMap(unique('probe')));
      return hooks.received(path).length > 0;
    });
    hooks.reviews.delete(path);
  }

  before(async () => {
    hooks = await startWebhookServer(['hooksvc.default.svc']);
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
    await hooks.close();
  });
  beforeEach(async () => {
    for (const path of created.splice(0)) await s.admin.request('DELETE', path);
    hooks.reset();
  });

  it('a validating webhook denies with its message, a 400 at least, and nothing is stored', async () => {
    hooks.answers.set('/deny.example.com', { kind: 'deny', message: 'no configmaps today' });
    await configure('validating', [{ name: 'deny.example.com' }]);
    const r = await eventually('denied', async () => {
      const c = await s.admin.request('POST', CM(), configMap(unique('denied')));
      return c.status !== 201 && c;
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.message, 'admission webhook "deny.example.com" denied the request: no configmaps today');
    assert.equal((await s.admin.request('GET', `${CM()}/${r.json.details?.name ?? 'x'}`)).status, 404);
    const review = hooks.received('/deny.example.com').at(-1)!;
    assert.equal(review.apiVersion, 'admission.k8s.io/v1');
    assert.equal(review.kind, 'AdmissionReview');
    const q = review.request;
    assert.match(q.uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(q.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(q.resource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.deepEqual(q.requestKind, q.kind);
    assert.deepEqual(q.requestResource, q.resource);
    assert.equal(q.operation, 'CREATE');
    assert.equal(q.namespace, 'default');
    assert.equal(q.userInfo.username, 'admin');
    assert.ok(q.userInfo.groups.includes('system:masters'));
    assert.equal(q.object.kind, 'ConfigMap');
    assert.equal(q.oldObject, null);
    assert.equal(q.dryRun, false);
    assert.equal(q.options.kind, 'CreateOptions');
  });

  it("a denial keeps the webhook's code and reason; an update is sent with its old object", async () => {
    const name = unique('cm');
    assert.equal((await s.admin.request('POST', CM(), configMap(name))).status, 201);
    hooks.answers.set('/forbid.example.com', { kind: 'deny', message: 'frozen', code: 403, reason: 'Forbidden' });
    await configure('validating', [
      { name: 'forbid.example.com', rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] },
    ]);
    const r = await eventually('denied', async () => {
      const c = await s.admin.request('PUT', `${CM()}/${name}`, { ...configMap(name), data: { a: '2' } });
      return c.status !== 200 && c;
    });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.reason, 'Forbidden');
    assert.equal(r.json.message, 'admission webhook "forbid.example.com" denied the request: frozen');
    const q = hooks.received('/forbid.example.com').at(-1)!.request;
    assert.equal(q.operation, 'UPDATE');
    assert.equal(q.oldObject.data.a, '1');
    assert.equal(q.object.data.a, '2');
    assert.equal(q.options.kind, 'UpdateOptions');
    assert.equal((await s.admin.request('GET', `${CM()}/${name}`)).json.data.a, '1', 'nothing stored');
  });

  it('calls validating webhooks in parallel, and every one must allow', async () => {
    for (const n of ['p1', 'p2', 'p3']) hooks.answers.set(`/${n}.example.com`, { kind: 'slow', ms: 400 });
    await configure('validating', [{ name: 'p1.example.com' }, { name: 'p2.example.com' }, { name: 'p3.example.com' }]);
    await inForce('/p3.example.com');
    hooks.reset();
    for (const n of ['p1', 'p2', 'p3']) hooks.answers.set(`/${n}.example.com`, { kind: 'slow', ms: 400 });
    const c = await s.admin.request('POST', CM(), configMap(unique('par')));
    assert.equal(c.status, 201, c.text);
    for (const n of ['p1', 'p2', 'p3']) assert.equal(hooks.received(`/${n}.example.com`).length, 1, n);
    assert.ok(hooks.maxInFlight >= 2, `calls overlapped (${hooks.maxInFlight} at most at once)`);
    hooks.answers.set('/p2.example.com', { kind: 'deny', message: 'p2 says no' });
    const d = await s.admin.request('POST', CM(), configMap(unique('par')));
    assert.equal(d.status, 400);
    assert.equal(d.json.message, 'admission webhook "p2.example.com" denied the request: p2 says no');
  });

  describe('failure policies', () => {
    const wrong: Array<[string, Answer | 'down', RegExp]> = [
      [
        'down',
        'down',
        /^Internal error occurred: failed calling webhook "down\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/x\?timeout=10s": .*ECONNREFUSED/,
      ],
      [
        'slow',
        { kind: 'slow', ms: 3000 },
        /failed calling webhook "slow\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\.example\.com\?timeout=1s": context deadline exceeded$/,
      ],
      [
        'garbage',
        { kind: 'garbage' },
        /failed calling webhook "garbage\.example\.com": received invalid webhook response: the response is not an AdmissionReview$/,
      ],
      [
        'http-500',
        { kind: 'http-500' },
        /failed calling webhook "http-500\.example\.com": failed to call webhook: the server responded with the status code 500/,
      ],
      ['wrong-uid', { kind: 'wrong-uid' }, /received invalid webhook response: expected response\.uid="[0-9a-f-]{36}", got "another-uid"$/],
      [
        'not-review',
        { kind: 'not-review' },
        /received invalid webhook response: expected webhook response of admission\.k8s\.io\/v1, Kind=AdmissionReview, got v1, Kind=ConfigMap$/,
      ],
    ];
    for (const [name, answer, message] of wrong) {
      it(`${name}: Fail answers 500 and stores nothing; Ignore lets the request through`, async () => {
        const host = `${name}.example.com`;
        const dead = `https://127.0.0.1:${await freePort()}/x`;
        if (answer !== 'down') hooks.answers.set(`/${host}`, answer);
        const spec = (failurePolicy: string, extra: Json = {}): HookSpec => ({
          name: host,
          ...(answer === 'down' ? { url: dead } : {}),
          extra: { failurePolicy, ...(name === 'slow' ? { timeoutSeconds: 1 } : {}), ...extra },
        });
        await configure('validating', [spec('Fail')]);
        const r = await eventually('failing closed', async () => {
          const c = await s.admin.request('POST', CM(), configMap(unique(name)));
          return c.status !== 201 && c;
        });
        assert.equal(r.status, 500, r.text);
        assert.equal(r.json.reason, 'InternalError');
        assert.match(r.json.message, message);
        const before = (await s.admin.request('GET', CM())).json.items.length;
        assert.equal((await s.admin.request('POST', CM(), configMap(unique(name)))).status, 500);
        assert.equal((await s.admin.request('GET', CM())).json.items.length, before, 'nothing stored half-way');
        for (const path of created.splice(0)) await s.admin.request('DELETE', path);
        await configure('validating', [spec('Ignore')]);
        // Fail open once the Ignore configuration replaced the Fail one.
        await eventually('failing open', async () => (await s.admin.request('POST', CM(), configMap(unique(name)))).status === 201);
        assert.equal((await s.admin.request('GET', '/healthz')).status, 200, 'the gateway keeps serving');
      });
    }
  });

  it('refuses a webhook whose certificate the caBundle does not trust, and never sends it the object', async () => {
    const other = generateCa('another-ca');
    const name = unique('validating');
    const r = await s.admin.request('POST', `${ADM}/validatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          ...webhook(hooks, { name: 'untrusted.example.com' }),
          clientConfig: { url: hooks.url('/untrusted'), caBundle: Buffer.from(other.certPem).toString('base64') },
        },
      ],
    });
    assert.equal(r.status, 201, r.text);
    created.push(`${ADM}/validatingwebhookconfigurations/${name}`);
    const d = await eventually('failing closed', async () => {
      const c = await s.admin.request('POST', CM(), configMap(unique('tls')));
      return c.status !== 201 && c;
    });
    assert.equal(d.status, 500, d.text);
    assert.match(
      d.json.message,
      /failed calling webhook "untrusted\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/untrusted\?timeout=10s": .*(certificate|self.signed|issuer)/i,
    );
    assert.equal(hooks.received('/untrusted').length, 0);
  });

  describe('mutating webhooks', () => {
    it('apply a JSONPatch: add, replace and remove; the validating webhooks see the result', async () => {
      hooks.answers.set('/mutate.example.com', {
        kind: 'patch',
        ops: [
          { op: 'add', path: '/metadata/labels/mutated', value: 'yes' },
          { op: 'replace', path: '/data/a', value: 'replaced' },
          { op: 'remove', path: '/data/b' },
        ],
      });
      await configure('mutating', [{ name: 'mutate.example.com' }]);
      await configure('validating', [{ name: 'see.example.com' }]);
      const name = unique('mut');
      const r = await eventually('mutated', async () => {
        const c = await s.admin.request('POST', CM(), { ...configMap(unique('mut')), data: { a: '1', b: '2' } });
        return c.json?.metadata?.labels?.mutated === 'yes' && c;
      });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.json.data, { a: 'replaced' });
      assert.equal((await s.admin.request('GET', `${CM()}/${r.json.metadata.name}`)).json.metadata.labels.mutated, 'yes', 'stored mutated');
      const seen = hooks.received('/see.example.com').at(-1)!.request.object;
      assert.equal(seen.metadata.labels.mutated, 'yes', 'validating webhooks see the mutated object');
      void name;
    });

    const bad: Array<[string, Answer, number, RegExp]> = [
      ['rename', { kind: 'patch', ops: [{ op: 'replace', path: '/metadata/name', value: 'other' }] }, 500, /may not change metadata\.name/],
      ['test-fails', { kind: 'patch', ops: [{ op: 'test', path: '/data/a', value: 'nope' }] }, 500, /^Internal error occurred: /],
      ['malformed', { kind: 'patch', ops: [{ op: 'jump', path: '/x' }] }, 500, /^Internal error occurred: /],
      ['merge-type', { kind: 'patch', ops: [], patchType: 'MergePatch' }, 500, /webhook returned invalid response\.patchType of "MergePatch"$/],
      ['wrong-type', { kind: 'patch', ops: [{ op: 'add', path: '/data/n', value: 5 }] }, 500, /returned an object that does not decode: data\.n: /],
      ['huge', { kind: 'huge-patch' }, 500, /failed calling webhook "huge\.example\.com": failed to call webhook: .*larger than 10485760 bytes/],
    ];
    for (const [name, answer, code, message] of bad) {
      it(`refuse a bad patch (${name}) and store nothing`, async () => {
        hooks.answers.set(`/${name}.example.com`, answer);
        await configure('mutating', [{ name: `${name}.example.com` }]);
        const r = await eventually('refused', async () => {
          const c = await s.admin.request('POST', CM(), configMap(unique(name)));
          return c.status !== 201 && c;
        });
        assert.equal(r.status, code, r.text);
        assert.match(r.json.message, message);
        const before = (await s.admin.request('GET', CM())).json.items.length;
        assert.notEqual((await s.admin.request('POST', CM(), configMap(unique(name)))).status, 201);
        assert.equal((await s.admin.request('GET', CM())).json.items.length, before);
      });
    }

    it('reinvocationPolicy IfNeeded calls an earlier webhook once more after a later one changed the object; Never does not', async () => {
      hooks.answers.set('/a-first.example.com', { kind: 'allow' });
      hooks.answers.set('/b-first.example.com', { kind: 'allow' });
      hooks.answers.set('/c-changes.example.com', {
        kind: 'patch',
        ops: (review) => (review.request.object.metadata.labels?.changed ? [] : [{ op: 'add', path: '/metadata/labels/changed', value: 'yes' }]),
      });
      await configure('mutating', [
        { name: 'a-first.example.com', extra: { reinvocationPolicy: 'IfNeeded' } },
        { name: 'b-first.example.com', extra: { reinvocationPolicy: 'Never' } },
        { name: 'c-changes.example.com', extra: { reinvocationPolicy: 'IfNeeded' } },
      ]);
      await inForce('/c-changes.example.com');
      hooks.reset();
      hooks.answers.set('/c-changes.example.com', {
        kind: 'patch',
        ops: (review) => (review.request.object.metadata.labels?.changed ? [] : [{ op: 'add', path: '/metadata/labels/changed', value: 'yes' }]),
      });
      const c = await s.admin.request('POST', CM(), configMap(unique('reinv')));
      assert.equal(c.status, 201, c.text);
      assert.equal(c.json.metadata.labels.changed, 'yes');
      assert.equal(hooks.received('/a-first.example.com').length, 2, 'IfNeeded: reinvoked once');
      assert.equal(hooks.received('/a-first.example.com')[1]!.request.object.metadata.labels.changed, 'yes', 'reinvoked on the changed object');
      assert.equal(hooks.received('/b-first.example.com').length, 1, 'Never: once');
      assert.equal(hooks.received('/c-changes.example.com').length, 1, 'the changing webhook is not reinvoked for its own change');
    });
  });

  describe('matching', () => {
    it('namespaceSelector: only namespaces with the label', async () => {
      for (const [ns, labels] of [
        ['wh-prod', { env: 'prod' }],
        ['wh-dev', { env: 'dev' }],
      ] as const) {
        const r = await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels } });
        assert.ok(r.status === 201 || r.status === 409, r.text);
      }
      hooks.answers.set('/prod-only.example.com', { kind: 'deny', message: 'prod is closed' });
      await configure('validating', [{ name: 'prod-only.example.com', extra: { namespaceSelector: { matchLabels: { env: 'prod' } } } }]);
      await eventually('prod denied', async () => (await s.admin.request('POST', CM('wh-prod'), configMap(unique('ns')))).status === 400);
      assert.equal((await s.admin.request('POST', CM('wh-dev'), configMap(unique('ns')))).status, 201);
    });

    it('objectSelector: only objects with the label (new or old)', async () => {
      hooks.answers.set('/labelled.example.com', { kind: 'deny', message: 'labelled' });
      await configure('validating', [
        { name: 'labelled.example.com', extra: { objectSelector: { matchExpressions: [{ key: 'guarded', operator: 'Exists' }] } } },
      ]);
      await eventually('labelled denied', async () => (await s.admin.request('POST', CM(), configMap(unique('obj'), { guarded: 'y' }))).status === 400);
      assert.equal((await s.admin.request('POST', CM(), configMap(unique('obj')))).status, 201);
    });

    it('rules: a subresource rule (pods/status) is not called for the pod itself, */* is', async () => {
      await configure('validating', [
        { name: 'status-only.example.com', rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'] }] },
        { name: 'everything.example.com', rules: [{ operations: ['CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: 'Namespaced' }] },
      ]);
      await inForce('/everything.example.com');
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: unique('pod') }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
      const c = await s.admin.request('POST', '/api/v1/namespaces/default/pods', pod);
      assert.equal(c.status, 201, c.text);
      assert.equal(hooks.received('/status-only.example.com').length, 0);
      assert.equal(hooks.received('/everything.example.com').at(-1)!.request.resource.resource, 'pods');
      const st = await s.admin.request('PUT', `/api/v1/namespaces/default/pods/${pod.metadata.name}/status`, { ...c.json, status: { phase: 'Running' } });
      assert.equal(st.status, 200, st.text);
      const q = hooks.received('/status-only.example.com').at(-1)!.request;
      assert.equal(q.subResource, 'status');
      assert.equal(q.requestSubResource, 'status');
      assert.equal(q.operation, 'UPDATE');
    });

    it('DELETE is sent with the old object', async () => {
      const name = unique('del');
      assert.equal((await s.admin.request('POST', CM(), configMap(name))).status, 201);
      hooks.answers.set('/nodelete.example.com', { kind: 'deny', message: 'keep it' });
      await configure('validating', [
        { name: 'nodelete.example.com', rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] },
      ]);
      const r = await eventually('delete denied', async () => {
        const d = await s.admin.request('DELETE', `${CM()}/${name}`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
        return d.status !== 200 && d;
      });
      assert.equal(r.status, 400, r.text);
      const q = hooks.received('/nodelete.example.com').at(-1)!.request;
      assert.equal(q.operation, 'DELETE');
      assert.equal(q.object, null);
      assert.equal(q.oldObject.metadata.name, name);
      assert.deepEqual(q.options, { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', propagationPolicy: 'Foreground' });
      assert.equal((await s.admin.request('GET', `${CM()}/${name}`)).status, 200);
    });
  });

  describe('matchConditions', () => {
    it('a false condition skips the webhook; the authorizer variable asks the front door', async () => {
      hooks.answers.set('/cond.example.com', { kind: 'deny', message: 'matched' });
      await configure('validating', [
        {
          name: 'cond.example.com',
          extra: {
            matchConditions: [
              { name: 'prefixed', expression: "object.metadata.name.startsWith('mc-')" },
              { name: 'admin-may-read-secrets', expression: "authorizer.group('').resource('secrets').namespace('default').check('get').allowed()" },
              { name: 'by-admin', expression: "request.userInfo.username == 'admin' && request.operation == 'CREATE'" },
            ],
          },
        },
      ]);
      await eventually('prefixed denied', async () => (await s.admin.request('POST', CM(), configMap(unique('mc')))).status === 400);
      const before = hooks.received('/cond.example.com').length;
      assert.equal((await s.admin.request('POST', CM(), configMap(unique('plain')))).status, 201);
      assert.equal(hooks.received('/cond.example.com').length, before, 'not called when a condition is false');
    });

    it('an authorizer check that is denied makes the condition false', async () => {
      hooks.answers.set('/sa-cond.example.com', { kind: 'deny', message: 'matched' });
      await configure('validating', [
        {
          name: 'sa-cond.example.com',
          extra: {
            matchConditions: [
              { name: 'nobody-may-read', expression: "authorizer.serviceAccount('default', 'nobody').group('').resource('secrets').check('get').allowed()" },
            ],
          },
        },
        { name: 'sa-probe.example.com' },
      ]);
      await inForce('/sa-probe.example.com');
      assert.equal((await s.admin.request('POST', CM(), configMap(unique('sa')))).status, 201);
      assert.equal(hooks.received('/sa-probe.example.com').length, 1);
      assert.equal(hooks.received('/sa-cond.example.com').length, 0, 'skipped: the service account may not read secrets');
    });

    it('an evaluation error fails closed under Fail and skips the webhook under Ignore', async () => {
      const cond = [{ name: 'missing-key', expression: "object.data['absent'] == 'x'" }];
      await configure('validating', [{ name: 'err-fail.example.com', extra: { matchConditions: cond } }]);
      const r = await eventually('failing closed', async () => {
        const c = await s.admin.request('POST', CM(), configMap(unique('err')));
        return c.status !== 201 && c;
      });
      assert.equal(r.status, 500, r.text);
      assert.match(r.json.message, /failed calling webhook "err-fail\.example\.com": failed to evaluate match conditions: missing-key: /);
      assert.equal(hooks.received('/err-fail.example.com').length, 0);
      for (const path of created.splice(0)) await s.admin.request('DELETE', path);
      hooks.answers.set('/err-ignore.example.com', { kind: 'deny', message: 'called' });
      await configure('validating', [{ name: 'err-ignore.example.com', extra: { matchConditions: cond, failurePolicy: 'Ignore' } }]);
      await eventually('skipped', async () => (await s.admin.request('POST', CM(), configMap(unique('err')))).status === 201);
      assert.equal(hooks.received('/err-ignore.example.com').length, 0);
    });
  });

  it('dry run: a webhook without side effects is called with dryRun true and nothing is stored', async () => {
    await configure('validating', [{ name: 'dry.example.com' }]);
    await inForce('/dry.example.com');
    const name = unique('dry');
    const c = await s.admin.request('POST', `${CM()}?dryRun=All`, configMap(name));
    assert.equal(c.status, 201, c.text);
    assert.equal(hooks.received('/dry.example.com').at(-1)!.request.dryRun, true);
    assert.equal((await s.admin.request('GET', `${CM()}/${name}`)).status, 404);
  });

  it('speaks AdmissionReview v1beta1 to a webhook that accepts only that', async () => {
    hooks.answers.set('/beta.example.com', { kind: 'deny', message: 'beta says no' });
    await configure('validating', [{ name: 'beta.example.com', extra: { admissionReviewVersions: ['v1beta1'] } }]);
    const r = await eventually('denied', async () => {
      const c = await s.admin.request('POST', CM(), configMap(unique('beta')));
      return c.status !== 201 && c;
    });
    assert.equal(r.json.message, 'admission webhook "beta.example.com" denied the request: beta says no');
    assert.equal(hooks.received('/beta.example.com').at(-1)!.apiVersion, 'admission.k8s.io/v1beta1');
  });

  it('sends the user after impersonation', async () => {
    const rb = await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'jane-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }],
    });
    assert.ok(rb.status === 201 || rb.status === 409, rb.text);
    await configure('validating', [{ name: 'who.example.com' }]);
    await inForce('/who.example.com');
    const c = await eventually('jane may create', async () => {
      const r = await s.admin.request('POST', CM(), configMap(unique('imp')), { 'impersonate-user': 'jane', 'impersonate-group': 'developers' });
      return r.status === 201 && r;
    });
    assert.equal(c.status, 201);
    const who = hooks.received('/who.example.com').at(-1)!.request.userInfo;
    assert.equal(who.username, 'jane');
    assert.ok(who.groups.includes('developers'), JSON.stringify(who));
  });

  it("passes a webhook's warnings as Warning headers", async () => {
    hooks.answers.set('/warn.example.com', { kind: 'allow', warnings: ['this configmap is odd'] });
    await configure('validating', [{ name: 'warn.example.com' }]);
    const c = await eventually('warned', async () => {
      const r = await s.admin.request('POST', CM(), configMap(unique('warn')));
      return r.headers['warning'] !== undefined && r;
    });
    assert.equal(c.status, 201);
    assert.equal(c.headers['warning'], '299 - "this configmap is odd"');
  });

  it('reaches a webhook through a Service, verifying <service>.<namespace>.svc', async () => {
    const port = Number(new URL(hooks.base).port);
    const svc = await s.admin.request('POST', '/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'hooksvc' },
      spec: { ports: [{ name: 'https', port: 8443, targetPort: port, protocol: 'TCP' }] },
    });
    assert.equal(svc.status, 201, svc.text);
    const slice = await s.admin.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'hooksvc-1', labels: { 'kubernetes.io/service-name': 'hooksvc' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    assert.equal(slice.status, 201, slice.text);
    hooks.answers.set('/by-service', { kind: 'deny', message: 'through the service' });
    const name = unique('validating');
    const r = await s.admin.request('POST', `${ADM}/validatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          ...webhook(hooks, { name: 'svc.example.com' }),
          clientConfig: { service: { namespace: 'default', name: 'hooksvc', path: '/by-service', port: 8443 }, caBundle: hooks.caBundle },
        },
      ],
    });
    assert.equal(r.status, 201, r.text);
    created.push(`${ADM}/validatingwebhookconfigurations/${name}`);
    const d = await eventually('denied through the service', async () => {
      const c = await s.admin.request('POST', CM(), configMap(unique('svc')));
      return c.status !== 201 && c;
    });
    assert.equal(d.json.message, 'admission webhook "svc.example.com" denied the request: through the service');
  });

  it("counts calls in kube's metrics", async () => {
    hooks.answers.set('/counted.example.com', { kind: 'deny', message: 'no' });
    const dead = `https://127.0.0.1:${await freePort()}/x`;
    await configure('validating', [{ name: 'counted.example.com' }, { name: 'open.example.com', url: dead, extra: { failurePolicy: 'Ignore' } }]);
    await eventually('denied', async () => (await s.admin.request('POST', CM(), configMap(unique('m')))).status === 400);
    const m = (await s.admin.request('GET', '/metrics')).text;
    assert.match(
      m,
      /apiserver_admission_webhook_request_total\{name="counted\.example\.com",type="validating",operation="CREATE",code="200",rejected="true"\} [1-9]/,
    );
    assert.match(
      m,
      /apiserver_admission_webhook_rejection_count\{name="counted\.example\.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="400"\} [1-9]/,
    );
    assert.match(
      m,
      /apiserver_admission_webhook_admission_duration_seconds_count\{name="counted\.example\.com",type="validating",operation="CREATE",rejected="true"\} [1-9]/,
    );
  });
});
