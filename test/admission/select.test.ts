// The webhooks a request is sent to (backends/core/admission/webhooks/select.ts)
// without a server: a configuration stored before side effects were required
// to be None (kube keeps such webhooks on update) refuses a dry run with 400
// before anything is called, and is called for a real write.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, UserInfo } from '../../lib/api/meta.js';
import { StatusError } from '../../lib/api/status.js';
import { builtinRegistry } from '../../lib/registry/index.js';
import { RuleIndex } from '../../backends/core/admission/matching/index.js';
import { webhooksOf } from '../../backends/core/admission/webhooks/hooks.js';
import { selectCalls } from '../../backends/core/admission/webhooks/select.js';
import type { AdmissionAttributes } from '../../backends/core/admission/types.js';
import type { CoreEnv } from '../../backends/core/env.js';

const config = (sideEffects: string): KObject => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name: 'c' },
  webhooks: [
    {
      name: 'effects.example.com',
      clientConfig: { url: 'https://127.0.0.1:1/x' },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      sideEffects,
      admissionReviewVersions: ['v1'],
    },
  ],
});

const attrs = (dryRun: boolean): AdmissionAttributes => ({
  operation: 'CREATE',
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } },
  oldObject: undefined,
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  resource: { group: '', version: 'v1', resource: 'configmaps' },
  subresource: '',
  namespace: 'default',
  name: 'x',
  user: { username: 'u', groups: [] } as UserInfo,
  dryRun,
  options: { kind: 'CreateOptions' },
});

const env = { registry: builtinRegistry() } as unknown as CoreEnv;

describe('dry run and side effects', () => {
  for (const effects of ['Some', 'Unknown']) {
    it(`sideEffects ${effects}: a dry run is refused with kube's 400, a real write is sent`, async () => {
      const index = new RuleIndex(webhooksOf(config(effects), false));
      await assert.rejects(selectCalls(env, index, attrs(true), undefined), (err: unknown) => {
        assert.ok(err instanceof StatusError);
        assert.equal(err.code, 400);
        assert.equal(err.status.reason, 'BadRequest');
        assert.equal(err.message, 'admission webhook "effects.example.com" does not support dry run');
        return true;
      });
      assert.equal((await selectCalls(env, index, attrs(false), undefined)).length, 1);
    });
  }
  for (const effects of ['None', 'NoneOnDryRun']) {
    it(`sideEffects ${effects}: called for a dry run`, async () => {
      const index = new RuleIndex(webhooksOf(config(effects), false));
      assert.equal((await selectCalls(env, index, attrs(true), undefined)).length, 1);
    });
  }
});
