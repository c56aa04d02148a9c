// A local APIService deleted after start (by a user, or lost with the store's
// data): kube-apiserver keeps serving the group version from its own handler,
// and its autoregister-completion check, once passed, stays passed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';

const APISERVICES = '/apis/apiregistration.k8s.io/v1/apiservices';

describe('a deleted local APIService', () => {
  let gh: Gatehouse;
  before(async () => {
    gh = await startGatehouse();
  });
  after(stopAll);

  it('does not fail readiness, and its group version is still served', async () => {
    const del = await gh.admin.request('DELETE', `${APISERVICES}/v1.coordination.k8s.io`);
    assert.equal(del.status, 200, del.text);
    // The gateway's informer applies events in order: once the availability controller
    // has judged an APIService created after the delete, the delete was seen.
    const marker = await gh.admin.request('POST', APISERVICES, {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1.marker.gatehouse.dev' },
      spec: {
        group: 'marker.gatehouse.dev',
        version: 'v1',
        service: { namespace: 'default', name: 'absent', port: 443 },
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 100,
        versionPriority: 10,
      },
    });
    assert.equal(marker.status, 201, marker.text);
    const deadline = Date.now() + 15_000; // a bound, not a timing assertion
    for (;;) {
      const m = await gh.admin.request('GET', `${APISERVICES}/v1.marker.gatehouse.dev`);
      if (m.json.status?.conditions?.some((c: { type: string }) => c.type === 'Available')) break;
      assert.ok(Date.now() < deadline, 'the availability controller never judged the marker APIService');
      await new Promise((r) => setTimeout(r, 100));
    }
    const ready = await gh.admin.request('GET', '/readyz/autoregister-completion');
    assert.equal(ready.status, 200, ready.text);
    const leases = await gh.admin.request('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases');
    assert.equal(leases.status, 200, leases.text);
  });
});
