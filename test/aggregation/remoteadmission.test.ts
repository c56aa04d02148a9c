// Admission in `gatehouse core-backend`: the RBAC escalation check runs in the
// backend's write path, with and without a delegated authorizer. Without
// --authorization-webhook-config-file the backend lets every authenticated
// request through (the gateway authorized it), but the escalation check asks
// about other verbs (escalate, bind): those must be judged by system:masters and
// the store's RBAC policy, never waved through.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stopAll, type Gatehouse } from '../e2e/helpers.js';
import { startCorePair } from './fixture.js';
import { eventually } from '../helpers/eventually.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1/namespaces/esc';
const asCarol = { 'Impersonate-User': 'carol' };

for (const delegated of [true, false]) {
  describe(`core-backend admission, ${delegated ? 'delegating to the gateway' : 'without a webhook'}`, { timeout: 180_000 }, () => {
    let gh: Gatehouse;
    before(async () => {
      ({ gh } = await startCorePair({ delegated }));
    });
    after(stopAll);

    it('refuses a Role granting what its author does not hold, allows one within it', async () => {
      assert.equal((await gh.admin.request('POST', '/api/v1/namespaces', { metadata: { name: 'esc' } })).status, 201);
      const writer = await gh.admin.request('POST', `${RBAC}/roles`, {
        metadata: { name: 'role-writer' },
        rules: [
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['create'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
        ],
      });
      assert.equal(writer.status, 201, writer.text);
      const binding = await gh.admin.request('POST', `${RBAC}/rolebindings`, {
        metadata: { name: 'carol-writes-roles' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'role-writer' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }],
      });
      assert.equal(binding.status, 201, binding.text);
      // Both processes read the binding through their watches: the first 201 says both have it.
      await eventually(
        'carol may create a role within her own rules',
        async () => {
          const r = await gh.admin.request(
            'POST',
            `${RBAC}/roles`,
            { metadata: { name: 'covered' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] },
            asCarol,
          );
          return r.status === 201 ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
      const wider = await gh.admin.request(
        'POST',
        `${RBAC}/roles`,
        { metadata: { name: 'wider' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] },
        asCarol,
      );
      assert.equal(wider.status, 403, wider.text);
      assert.match(wider.text, /roles\.rbac\.authorization\.k8s\.io \\"wider\\" is forbidden/);
      assert.equal((await gh.admin.request('GET', `${RBAC}/roles/wider`)).status, 404);
    });
  });
}
