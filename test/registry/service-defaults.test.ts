// A Service's defaults as kube's SetDefaults_Service writes them: read back
// from a started server, so the registry's defaulting is what is tested.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SVC = '/api/v1/namespaces/default/services';

describe("a Service's defaults, as kube's SetDefaults_Service", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });
  const create = async (name: string, spec: Record<string, unknown>) => {
    const r = await s.admin.request('POST', SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
    assert.equal(r.status, 201, r.text);
    return r.json.spec as Record<string, unknown>;
  };

  it('a ClusterIP service: affinity None, TCP, the target port from the port, the internal policy Cluster', async () => {
    const spec = await create('plain', { selector: { app: 'web' }, ports: [{ port: 80 }, { name: 'named', port: 8443, targetPort: 'https' }] });
    assert.equal(spec['type'], 'ClusterIP');
    assert.equal(spec['sessionAffinity'], 'None');
    assert.equal(spec['internalTrafficPolicy'], 'Cluster');
    assert.equal(spec['externalTrafficPolicy'], undefined, 'not externally accessible');
    assert.deepEqual(spec['ports'], [
      { port: 80, protocol: 'TCP', targetPort: 80 },
      { name: 'named', port: 8443, protocol: 'TCP', targetPort: 'https' },
    ]);
  });

  it('a LoadBalancer: the external policy Cluster and node ports allocated for it', async () => {
    const spec = await create('lb', { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 443, protocol: 'UDP', targetPort: 0 }] });
    assert.equal(spec['externalTrafficPolicy'], 'Cluster');
    assert.equal(spec['allocateLoadBalancerNodePorts'], true);
    assert.deepEqual((spec['ports'] as unknown[])[0], { port: 443, protocol: 'UDP', targetPort: 443 });
  });

  it('ClientIP affinity gets its three-hour timeout; None drops a config', async () => {
    const sticky = await create('sticky', { sessionAffinity: 'ClientIP', ports: [{ port: 80 }] });
    assert.deepEqual(sticky['sessionAffinityConfig'], { clientIP: { timeoutSeconds: 10800 } });
    const kept = await create('kept', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } }, ports: [{ port: 80 }] });
    assert.deepEqual(kept['sessionAffinityConfig'], { clientIP: { timeoutSeconds: 60 } });
  });

  it('an ExternalName service gets no traffic policies', async () => {
    const spec = await create('ext', { type: 'ExternalName', externalName: 'example.com' });
    assert.equal(spec['internalTrafficPolicy'], undefined);
    assert.equal(spec['externalTrafficPolicy'], undefined);
    assert.equal(spec['sessionAffinity'], 'None');
  });
});
