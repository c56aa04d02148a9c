// `gatehouse core-backend` as its own process: it trusts only the front-proxy
// certificate's identity headers and asks the gateway (a real `gatehouse
// serve`) with SubjectAccessReview whether that user may act.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATEHOUSE_BIN, freePort, sleep, spawnTracked, startGatehouse, stopAll, tempDir, type Gatehouse, type Proc } from '../e2e/helpers.js';
import { HttpsClient } from '../helpers/client.js';
import { servingPki, type Pem } from './fixture.js';
import { eventually } from '../helpers/eventually.js';

describe('the core backend as its own process', { timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let core: Proc;
  let pem: Pem;
  let proxied: HttpsClient;
  let plain: HttpsClient;

  before(async () => {
    gh = await startGatehouse();
    pem = servingPki(tempDir('core-certs'), 'core-api');
    const port = await freePort();
    const pki = join(gh.dataDir, 'pki');
    // The gateway as the SubjectAccessReview webhook: the kubeconfig's server is the review URL itself.
    const sarKubeconfig = join(tempDir('core-sar'), 'sar.kubeconfig');
    writeFileSync(sarKubeconfig, readFileSync(gh.kubeconfig, 'utf8').replace(/server: (\S+)/, 'server: $1/apis/authorization.k8s.io/v1/subjectaccessreviews'));
    core = spawnTracked(process.execPath, [
      GATEHOUSE_BIN,
      'core-backend',
      `--secure-port=${port}`,
      `--data-dir=${tempDir('core-data')}`,
      `--tls-cert-file=${pem.certFile}`,
      `--tls-private-key-file=${pem.keyFile}`,
      `--requestheader-client-ca-file=${join(pki, 'front-proxy-ca.crt')}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--authorization-mode=Webhook',
      `--authorization-webhook-config-file=${sarKubeconfig}`,
      '--authorization-webhook-version=v1',
      '--authorization-webhook-cache-authorized-ttl=0s',
      '--authorization-webhook-cache-unauthorized-ttl=0s',
    ]);
    core.child.stdin?.end();
    await core.waitFor('core-backend serving', (p) => p.stdout.includes('is serving on') || !p.running, 60_000);
    assert.ok(core.running, core.stderr);
    const url = `https://127.0.0.1:${port}`;
    proxied = new HttpsClient(url, {
      ca: pem.ca,
      cert: readFileSync(join(pki, 'front-proxy-client.crt'), 'utf8'),
      key: readFileSync(join(pki, 'front-proxy-client.key'), 'utf8'),
    });
    plain = new HttpsClient(url, { ca: pem.ca, cert: readFileSync(join(pki, 'admin.crt'), 'utf8'), key: readFileSync(join(pki, 'admin.key'), 'utf8') });
  });

  after(async () => {
    proxied?.close();
    plain?.close();
    await stopAll();
  });

  it('serves the resource API to the front proxy for a privileged user, with the default namespaces', async () => {
    const r = await eventually(
      'the default namespaces through the front proxy',
      async () => {
        const r = await proxied.request('GET', '/api/v1/namespaces', undefined, { 'X-Remote-User': 'ops', 'X-Remote-Group': 'system:masters' });
        return r.status === 200 && r.json.items.length >= 4 ? r : undefined;
      },
      { intervalMs: 100 },
    );
    assert.ok(r.json.items.some((n: { metadata: { name: string } }) => n.metadata.name === 'kube-system'));
  });

  it('keeps local APIServices of the built-in groups in its own store', async () => {
    let r;
    for (let i = 0; i < 100; i++) {
      r = await proxied.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.rbac.authorization.k8s.io', undefined, {
        'X-Remote-User': 'ops',
        'X-Remote-Group': 'system:masters',
      });
      // Autoregistration creates the APIService, then writes its status: wait for both.
      if (r.status === 200 && r.json.status?.conditions) break;
      await sleep(100);
    }
    assert.equal(r!.status, 200, r!.text);
    assert.equal(r!.json.status?.conditions?.[0]?.reason, 'Local', r!.text);
  });

  it('ignores identity headers that do not come with the front-proxy certificate', async () => {
    const r = await plain.request('GET', '/api/v1/namespaces', undefined, { 'X-Remote-User': 'ops', 'X-Remote-Group': 'system:masters' });
    // A certificate that does not chain to the front-proxy CA, with identity headers, is a failed credential.
    assert.equal(r.status, 401, r.text);
  });

  it('delegates authorization to the gateway with SubjectAccessReview', async () => {
    const denied = await proxied.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { 'X-Remote-User': 'jane' });
    assert.equal(denied.status, 403, denied.text);
    await gh.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'jane-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }],
    });
    await eventually(
      "jane's list of configmaps",
      async () => (await proxied.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { 'X-Remote-User': 'jane' })).status === 200,
      { intervalMs: 100 },
    );
    const write = await proxied.request(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
      { 'X-Remote-User': 'jane' },
    );
    assert.equal(write.status, 403, write.text);
  });
});
