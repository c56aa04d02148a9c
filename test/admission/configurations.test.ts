// MutatingWebhookConfiguration and ValidatingWebhookConfiguration served by
// the core backend: kube's v1 defaults, kube's validation (field paths and
// words, CEL match conditions compiled at write), the update relaxations,
// and kubectl's get, explain and create against them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { findKubectl, Kubectl, stopAll } from '../e2e/helpers.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const kubectlBinary = findKubectl('1.33') ?? findKubectl();
const ADM = '/apis/admissionregistration.k8s.io/v1';
const good = (extra: Json = {}): Json => ({
  name: 'good.example.com',
  clientConfig: { url: 'https://hooks.example.com/validate' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...extra,
});
const config = (kind: string, name: string, webhooks: Json[]) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks });

describe('webhook configurations', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
    stopAll();
  });

  it("sets kube's v1 defaults", async () => {
    const svcHook = good({ name: 'svc.example.com', clientConfig: { service: { namespace: 'default', name: 'hooks' } } });
    const r = await s.admin.request('POST', `${ADM}/mutatingwebhookconfigurations`, config('MutatingWebhookConfiguration', 'defaults', [good(), svcHook]));
    assert.equal(r.status, 201, r.text);
    const w = r.json.webhooks[0];
    assert.equal(w.failurePolicy, 'Fail');
    assert.equal(w.matchPolicy, 'Equivalent');
    assert.equal(w.timeoutSeconds, 10);
    assert.equal(w.reinvocationPolicy, 'Never');
    assert.deepEqual(w.namespaceSelector, {});
    assert.deepEqual(w.objectSelector, {});
    assert.equal(w.rules[0].scope, '*');
    assert.equal(r.json.webhooks[1].clientConfig.service.port, 443);
    assert.equal(r.json.metadata.generation, 1);
    const v = await s.admin.request('POST', `${ADM}/validatingwebhookconfigurations`, config('ValidatingWebhookConfiguration', 'defaults', [good()]));
    assert.equal(v.status, 201, v.text);
    assert.equal(v.json.webhooks[0].reinvocationPolicy, undefined, 'validating webhooks have no reinvocation');
    const changed = await s.admin.request('PUT', `${ADM}/validatingwebhookconfigurations/defaults`, { ...v.json, webhooks: [good({ timeoutSeconds: 5 })] });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.json.metadata.generation, 2, 'a change of the webhooks is a new generation');
    const relabelled = await s.admin.request('PUT', `${ADM}/validatingwebhookconfigurations/defaults`, {
      ...changed.json,
      metadata: { ...changed.json.metadata, labels: { a: 'b' } },
    });
    assert.equal(relabelled.json.metadata.generation, 2, 'metadata is not');
  });

  const invalid: Array<[string, Json[], Array<[string, string]>]> = [
    [
      'fields the schema requires',
      [{ name: 'bare.example.com', clientConfig: { url: 'https://x.example.com' } }],
      [
        ['webhooks[0].sideEffects', 'Required value'],
        ['webhooks[0].admissionReviewVersions', 'Required value'],
      ],
    ],
    [
      'a short name and no client',
      [{ ...good(), name: 'bare', clientConfig: {}, admissionReviewVersions: [] }],
      [
        ['webhooks[0].name', 'Invalid value: "bare": should be a domain with at least three segments separated by dots'],
        ['webhooks[0].clientConfig', 'Required value: exactly one of url or service is required'],
        ['webhooks[0].admissionReviewVersions', 'Required value: must specify one of v1, v1beta1'],
      ],
    ],
    [
      'values out of range',
      [good({ sideEffects: 'Some', timeoutSeconds: 31, failurePolicy: 'Maybe', admissionReviewVersions: ['v2'] })],
      [
        ['webhooks[0].failurePolicy', 'Unsupported value: "Maybe": supported values: "Fail", "Ignore"'],
        ['webhooks[0].sideEffects', 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'],
        ['webhooks[0].timeoutSeconds', 'Invalid value: 31: the timeout value must be between 1 and 30 seconds'],
        ['webhooks[0].admissionReviewVersions', 'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1'],
      ],
    ],
    ['duplicate names', [good(), good()], [['webhooks[1].name', 'Duplicate value: "good.example.com"']]],
    [
      'a URL with a query, and http',
      [good({ clientConfig: { url: 'http://hooks.example.com/x?a=b' } })],
      [
        ['webhooks[0].clientConfig.url', `Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`],
        ['webhooks[0].clientConfig.url', 'Invalid value: "a=b": query parameters are not permitted in the URL'],
      ],
    ],
    [
      'a service port',
      [good({ clientConfig: { service: { namespace: 'default', name: 'hooks', port: 70000 } } })],
      [['webhooks[0].clientConfig.service.port', 'Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive']],
    ],
    [
      'rules',
      [good({ rules: [{ operations: ['CREATE', '*'], apiGroups: [], apiVersions: ['v1'], resources: ['*/*', 'pods'] }] })],
      [
        ['webhooks[0].rules[0].operations', `Invalid value: []string{"CREATE", "*"}: if '*' is present, must not specify other operations`],
        ['webhooks[0].rules[0].apiGroups', 'Required value'],
        ['webhooks[0].rules[0].resources', `Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources`],
      ],
    ],
    [
      'match conditions that do not compile',
      [
        good({
          matchConditions: [
            { name: 'bad', expression: 'object.metadata.name ==' },
            { name: 'int', expression: '1' },
          ],
        }),
      ],
      [
        ['webhooks[0].matchConditions[0].expression', 'Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:'],
        ['webhooks[0].matchConditions[1].expression', 'Invalid value: "1": must evaluate to bool but got int'],
      ],
    ],
    [
      'params in a match condition',
      [good({ matchConditions: [{ name: 'p', expression: 'params.x == 1' }] })],
      [
        [
          'webhooks[0].matchConditions[0].expression',
          `Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'`,
        ],
      ],
    ],
    [
      'a selector',
      [good({ namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In' }] } })],
      [['webhooks[0].namespaceSelector.matchExpressions[0].values', "Required value: must be specified when `operator` is 'In' or 'NotIn'"]],
    ],
  ];
  for (const [what, webhooks, causes] of invalid) {
    it(`refuses ${what} with 422 and kube's causes`, async () => {
      for (const [kind, plural] of [
        ['ValidatingWebhookConfiguration', 'validatingwebhookconfigurations'],
        ['MutatingWebhookConfiguration', 'mutatingwebhookconfigurations'],
      ]) {
        const r = await s.admin.request('POST', `${ADM}/${plural}`, config(kind!, 'bad', webhooks));
        assert.equal(r.status, 422, r.text);
        assert.equal(r.json.reason, 'Invalid');
        for (const [field, message] of causes) {
          assert.ok(
            r.json.details.causes.some((c: Json) => c.field === field && String(c.message).startsWith(message)),
            `${kind}: ${field}: ${message}\n${JSON.stringify(r.json.details.causes, null, 1)}`,
          );
        }
      }
    });
  }

  it('more than 64 match conditions are too many', async () => {
    const conds = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' }));
    const r = await s.admin.request(
      'POST',
      `${ADM}/validatingwebhookconfigurations`,
      config('ValidatingWebhookConfiguration', 'many', [good({ matchConditions: conds })]),
    );
    assert.equal(r.status, 422, r.text);
    assert.ok(r.json.details.causes.some((c: Json) => c.field === 'webhooks[0].matchConditions' && c.message === 'Too many: 65: must have at most 64 items'));
  });

  it('kubectl gets and explains them, and shows a refusal', { skip: kubectlBinary ? false : 'kubectl is not installed' }, async () => {
    const k = new Kubectl(kubectlBinary!, s.kubeconfig);
    await k.ok(['apply', '-f', '-'], JSON.stringify(config('ValidatingWebhookConfiguration', 'from-kubectl', [good(), good({ name: 'second.example.com' })])));
    const table = await k.ok(['get', 'validatingwebhookconfigurations', 'from-kubectl']);
    assert.match(table, /^NAME\s+WEBHOOKS\s+AGE\n/);
    assert.match(table, /^from-kubectl\s+2\s+/m);
    const explain = await k.ok(['explain', 'validatingwebhookconfiguration.webhooks.sideEffects']);
    assert.match(explain, /GROUP:\s+admissionregistration\.k8s\.io/);
    assert.match(explain, /sideEffects states whether this webhook has side effects/);
    const mexplain = await k.ok(['explain', 'mutatingwebhookconfiguration.webhooks.reinvocationPolicy']);
    assert.match(mexplain, /reinvocationPolicy indicates whether this webhook should be called multiple\s+times/);
    const bad = await k.run(['apply', '-f', '-'], JSON.stringify(config('ValidatingWebhookConfiguration', 'broken', [good({ timeoutSeconds: 0 })])));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /webhooks\[0\]\.timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds/);
  });
});
