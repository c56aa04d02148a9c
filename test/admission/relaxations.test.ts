// kube's update relaxations of webhook configurations, on the type's
// validation alone: what the stored object already had (side effects other
// than None, review versions this server does not know, duplicate names,
// match conditions that no longer compile) is accepted again on update,
// and refused on create.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { validatingwebhookconfigurations as t } from '../../lib/registry/builtins/admissionregistration.js';

const hook = (extra: Record<string, unknown> = {}) => ({
  name: 'a.example.com',
  clientConfig: { url: 'https://hooks.example.com/' },
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...extra,
});
const config = (...webhooks: unknown[]): KObject =>
  ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'c' }, webhooks }) as KObject;
const fields = (obj: KObject, old?: KObject) => t.validate!(obj, old).map((c) => `${c.field}: ${c.message}`);

describe('update relaxations', () => {
  const cases: Array<[string, KObject]> = [
    ['side effects Some', config(hook({ sideEffects: 'Some' }))],
    ['only unknown review versions', config(hook({ admissionReviewVersions: ['v0'] }))],
    ['duplicate names', config(hook(), hook())],
    ['a match condition that does not compile', config(hook({ matchConditions: [{ name: 'm', expression: 'object.x ==' }] }))],
  ];
  for (const [what, stored] of cases) {
    it(`${what}: refused on create, accepted on an update of an object that had it`, () => {
      assert.notDeepEqual(fields(stored), []);
      const updated = structuredClone(stored);
      updated.metadata.labels = { touched: 'yes' };
      assert.deepEqual(fields(updated, stored), []);
    });
  }
  it('a changed match condition is compiled again', () => {
    const stored = config(hook({ matchConditions: [{ name: 'm', expression: 'object.x ==' }] }));
    const updated = config(hook({ matchConditions: [{ name: 'm', expression: 'object.y ==' }] }));
    assert.match(fields(updated, stored).join('\n'), /webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "object\.y ==": compilation failed/);
  });
});
