// ValidatingAdmissionPolicies and bindings are read through a watch by every
// process sharing a store: two `gatehouse serve` processes on one Redis
// prefix; a policy and binding made through one process apply to writes
// through the other (bounded wait), and deleting the binding there too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from '../store/fixtures/redis-env.js';

const skip = await redisSkipReason();
const CM = '/api/v1/namespaces/default/configmaps';
const A = '/apis/admissionregistration.k8s.io/v1';

describe('ValidatingAdmissionPolicies across processes', { skip }, () => {
  const prefix = uniquePrefix('vap');
  let a: Gatehouse;
  let b: Gatehouse;
  before(async () => {
    const flags = ['--storage-backend=redis', `--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`];
    [a, b] = await Promise.all([startGatehouse({ flags }), startGatehouse({ flags })]);
  });
  after(async () => {
    await stopAll();
    await dropPrefix(prefix);
  });

  it('a policy bound through one process applies to writes through the other, and unbinding it too', async () => {
    const create = (g: Gatehouse) =>
      g.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'mp-' }, data: { shared: 'no' } });
    // The other process has admitted writes (its cache is listed) before the policy exists.
    assert.equal((await create(b)).status, 201);
    const p = await a.admin.request('POST', `${A}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'shared.example.com' },
      spec: {
        matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] },
        validations: [{ expression: "!has(object.data) || !('shared' in object.data)", message: 'refused everywhere' }],
      },
    });
    assert.equal(p.status, 201, p.text);
    const bd = await a.admin.request('POST', `${A}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'shared' },
      spec: { policyName: 'shared.example.com', validationActions: ['Deny'] },
    });
    assert.equal(bd.status, 201, bd.text);
    const denied = await eventually('denied through the other process', async () => {
      const c = await create(b);
      return c.status === 422 && c;
    });
    assert.match(
      denied.json.message,
      /^configmaps "mp-[a-z0-9]{5}" is forbidden: ValidatingAdmissionPolicy 'shared\.example\.com' with binding 'shared' denied request: refused everywhere$/,
    );
    assert.equal((await a.admin.request('DELETE', `${A}/validatingadmissionpolicybindings/shared`)).status, 200);
    await eventually('allowed again through the other process', async () => (await create(b)).status === 201);
  });
});
