// The certificate controllers (csrapproving, csrsigning, csrcleaner) in
// `gatehouse core-backend`, the gateway forwarding certificates.k8s.io to it:
// a node's request made with a bootstrap token is auto-approved there (its
// SubjectAccessReview for nodeclient delegated to the gateway) and signed with
// the --cluster-signing-* CA, which is the gateway's client CA, so the issued
// certificate logs in at the gateway as the node; a person's request approved
// through /approval is signed; a request denied over an hour ago is removed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { HttpsClient } from '../helpers/client.js';
import { eventually } from '../helpers/eventually.js';
import { stopAll, type Gatehouse } from '../e2e/helpers.js';
import { startCorePair } from '../aggregation/fixture.js';
import { CLIENT_USAGES, csrBody, CSRS, hasOpenssl, makeCsr, withCondition } from './csrkit.js';

const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const CLIENT = 'kubernetes.io/kube-apiserver-client';
const TOKEN = 'r3mote.0123456789abcdef';
const HOUR_MS = 3600_000;

function binding(name: string, role: string, group: string) {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'Group', name: group, apiGroup: 'rbac.authorization.k8s.io' }],
  };
}

describe('certificate controllers in a remote core backend', { skip: hasOpenssl ? false : 'openssl is not installed', timeout: 180_000 }, () => {
  let gh: Gatehouse;
  let ca: string;
  const clients: HttpsClient[] = [];
  const client = (opts: { cert?: string; key?: string } = {}) => {
    const c = new HttpsClient(gh.url, { ca, ...opts });
    clients.push(c);
    return c;
  };
  const issued = (name: string) =>
    eventually(
      `${name} issued`,
      async () => {
        const r = await gh.admin.request('GET', `${CSRS}/${name}`);
        return r.json?.status?.certificate ? r.json : undefined;
      },
      { timeoutMs: 30_000 },
    );
  const pemOf = (csr: any) => Buffer.from(csr.status.certificate, 'base64').toString();
  const whoami = async (c: HttpsClient) =>
    (await c.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })).json
      ?.status?.userInfo;

  before(async () => {
    // csrsigning in the core backend signs with the gateway's client CA, so the certificates log in at the gateway.
    const pair = await startCorePair({
      delegated: true,
      coreFlags: (pki) => [`--cluster-signing-cert-file=${pki.caCert}`, `--cluster-signing-key-file=${pki.caKey}`, '--cluster-signing-duration=2h'],
      gatewayFlags: ['--enable-bootstrap-token-auth'],
    });
    gh = pair.gh;
    ca = readFileSync(pair.pki.caCert, 'utf8');
  });
  after(async () => {
    for (const c of clients) c.close();
    await stopAll();
  });

  it('auto-approves and signs a node join made with a bootstrap token; the certificate is the node at the gateway', async () => {
    const secret = await gh.admin.request('POST', '/api/v1/namespaces/kube-system/secrets', {
      metadata: { name: 'bootstrap-token-r3mote' },
      type: 'bootstrap.kubernetes.io/token',
      stringData: {
        'token-id': 'r3mote',
        'token-secret': '0123456789abcdef',
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
      },
    });
    assert.equal(secret.status, 201, secret.text);
    for (const b of [
      binding('kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', 'system:bootstrappers:kubeadm:default-node-token'),
      binding(
        'kubeadm:node-autoapprove-bootstrap',
        'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
        'system:bootstrappers:kubeadm:default-node-token',
      ),
    ]) {
      const r = await gh.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', b);
      assert.equal(r.status, 201, r.text);
    }
    const machine = makeCsr('/O=system:nodes/CN=system:node:remote-1');
    const bootstrap = client();
    // The gateway learns the token and the bindings through its watches of the remote store.
    const created = await eventually(
      'the bootstrap token may create a request',
      async () => {
        const r = await bootstrap.request('POST', CSRS, csrBody('node-csr-remote-1', machine.csrPem, KUBELET_CLIENT, CLIENT_USAGES), {
          authorization: `Bearer ${TOKEN}`,
        });
        return r.status === 201 ? r : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(created.json.spec.username, 'system:bootstrap:r3mote');
    const csr = await issued('node-csr-remote-1');
    const approved = csr.status.conditions.find((c: any) => c.type === 'Approved');
    assert.equal(approved.reason, 'AutoApproved');
    assert.equal(approved.message, 'Auto approving kubelet client certificate after SubjectAccessReview.');
    const node = client({ cert: pemOf(csr), key: machine.keyPem });
    const user = await whoami(node);
    assert.equal(user?.username, 'system:node:remote-1');
    assert.deepEqual(user?.groups, ['system:nodes', 'system:authenticated']);
  });

  it("signs a person's request approved through /approval, within --cluster-signing-duration", async () => {
    const person = makeCsr('/O=dev/CN=remote-alice');
    const created = await gh.admin.request('POST', CSRS, csrBody('remote-alice', person.csrPem, CLIENT, CLIENT_USAGES));
    assert.equal(created.status, 201, created.text);
    const approved = await gh.admin.request('PUT', `${CSRS}/remote-alice/approval`, withCondition(created.json, 'Approved'));
    assert.equal(approved.status, 200, approved.text);
    const csr = await issued('remote-alice');
    const { X509Certificate } = await import('node:crypto');
    const cert = new X509Certificate(pemOf(csr));
    assert.ok(cert.checkIssued(new X509Certificate(ca)), 'issued by the --cluster-signing-cert-file CA');
    const lifetime = Date.parse(cert.validTo) - Date.now();
    assert.ok(lifetime > HOUR_MS && lifetime <= 2 * HOUR_MS, `NotAfter capped by --cluster-signing-duration=2h: ${cert.validTo}`);
    const user = await whoami(client({ cert: pemOf(csr), key: person.keyPem }));
    assert.equal(user?.username, 'remote-alice');
    assert.deepEqual(user?.groups, ['dev', 'system:authenticated']);
  });

  it('removes a request denied over an hour ago and keeps one denied now', async () => {
    const request = makeCsr('/CN=remote-cleaner').csrPem;
    const denyAt = async (name: string, at: number) => {
      const created = await gh.admin.request('POST', CSRS, csrBody(name, request, 'example.com/none', CLIENT_USAGES));
      assert.equal(created.status, 201, created.text);
      const body = withCondition(created.json, 'Denied') as any;
      // A condition keeps the lastUpdateTime it is given (kube's populateConditionTimestamps fills only missing ones).
      body.status.conditions.at(-1).lastUpdateTime = new Date(at).toISOString().replace(/\.\d+Z$/, 'Z');
      const denied = await gh.admin.request('PUT', `${CSRS}/${name}/approval`, body);
      assert.equal(denied.status, 200, denied.text);
    };
    await denyAt('denied-now', Date.now());
    await denyAt('denied-long-ago', Date.now() - 2 * HOUR_MS);
    await eventually('denied-long-ago removed', async () => (await gh.admin.request('GET', `${CSRS}/denied-long-ago`)).status === 404 || undefined, {
      timeoutMs: 30_000,
    });
    assert.equal((await gh.admin.request('GET', `${CSRS}/denied-now`)).status, 200);
  });
});
