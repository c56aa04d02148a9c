// The node join through a started server, as kubelet TLS bootstrapping does
// it: a real bootstrap token, kubeadm's bindings over the bootstrap policy's
// roles, a new machine's key and request auto-approved (csrapproving's
// SubjectAccessReview for nodeclient) and signed, the certificate logging in
// as system:node:<name>; renewal by the node itself (selfnodeclient); a
// request for another node's name left pending.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { devPkiPaths } from '../../certs/devpki.js';
import { HttpsClient } from '../helpers/client.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { certClient, CLIENT_USAGES, csrBody, CSRS, hasOpenssl, makeCsr } from './csrkit.js';

const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const TOKEN = 'j0inme.0123456789abcdef';

function binding(name: string, role: string, group: string) {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'Group', name: group, apiGroup: 'rbac.authorization.k8s.io' }],
  };
}

function issued(s: TestServer, name: string): Promise<any> {
  return eventually(
    `${name} issued`,
    async () => {
      const r = await s.admin.request('GET', `${CSRS}/${name}`);
      return r.json.status?.certificate ? r.json : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

const pemOf = (csr: any) => Buffer.from(csr.status.certificate, 'base64').toString();

describe('node join with a bootstrap token', { skip: hasOpenssl ? false : 'openssl is not installed' }, () => {
  let s: TestServer;
  let bootstrap: HttpsClient;
  before(async () => {
    s = await startTestServer({ flags: ['--enable-bootstrap-token-auth', '--controllers=-csrcleaner,-serviceaccount,-root-ca-cert-publisher,*'] });
    const secret = await s.admin.request('POST', '/api/v1/namespaces/kube-system/secrets', {
      metadata: { name: 'bootstrap-token-j0inme' },
      type: 'bootstrap.kubernetes.io/token',
      stringData: {
        'token-id': 'j0inme',
        'token-secret': '0123456789abcdef',
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
      },
    });
    assert.equal(secret.status, 201, secret.text);
    // kubeadm's bindings of the bootstrap policy's roles.
    for (const b of [
      binding('kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', 'system:bootstrappers:kubeadm:default-node-token'),
      binding(
        'kubeadm:node-autoapprove-bootstrap',
        'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
        'system:bootstrappers:kubeadm:default-node-token',
      ),
      binding('kubeadm:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:nodes'),
    ]) {
      const r = await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', b);
      assert.equal(r.status, 201, r.text);
    }
    bootstrap = new HttpsClient(s.url, { ca: readFileSync(devPkiPaths(s.dataDir).caCert, 'utf8') });
  });
  after(async () => {
    bootstrap?.close();
    await s?.close();
  });

  it('auto-approves and signs the first node client request, whose certificate is the node', async () => {
    const machine = makeCsr('/O=system:nodes/CN=system:node:worker-1');
    const auth = { authorization: `Bearer ${TOKEN}` };
    const created = await bootstrap.request('POST', CSRS, csrBody('node-csr-worker-1', machine.csrPem, KUBELET_CLIENT, CLIENT_USAGES), auth);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.spec.username, 'system:bootstrap:j0inme');
    const csr = await issued(s, 'node-csr-worker-1');
    const approved = csr.status.conditions.find((c: any) => c.type === 'Approved');
    assert.equal(approved.reason, 'AutoApproved');
    assert.equal(approved.message, 'Auto approving kubelet client certificate after SubjectAccessReview.');
    // The bootstrap token may read its own request (system:node-bootstrapper) to fetch the certificate.
    const read = await bootstrap.request('GET', `${CSRS}/node-csr-worker-1`, undefined, auth);
    assert.equal(read.status, 200, read.text);
    const node = certClient(s, pemOf(csr), machine.keyPem);
    try {
      const who = await node.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      });
      assert.equal(who.json.status.userInfo.username, 'system:node:worker-1');
      assert.deepEqual(who.json.status.userInfo.groups, ['system:nodes', 'system:authenticated']);
      assert.equal((await node.request('GET', '/api/v1/namespaces/kube-system/secrets/bootstrap-token-j0inme')).status, 403);

      // Renewal by the node itself, and a request for another node's name that nobody approves.
      const other = makeCsr('/O=system:nodes/CN=system:node:worker-2');
      const stolen = await node.request('POST', CSRS, csrBody('worker-1-asks-for-worker-2', other.csrPem, KUBELET_CLIENT, CLIENT_USAGES));
      assert.equal(stolen.status, 201, stolen.text);
      const renewal = makeCsr('/O=system:nodes/CN=system:node:worker-1');
      const renewed = await node.request('POST', CSRS, csrBody('worker-1-renewal', renewal.csrPem, KUBELET_CLIENT, CLIENT_USAGES));
      assert.equal(renewed.status, 201, renewed.text);
      const r = await issued(s, 'worker-1-renewal');
      assert.equal(r.status.conditions[0].message, 'Auto approving self kubelet client certificate after SubjectAccessReview.');
      const pending = await s.admin.request('GET', `${CSRS}/worker-1-asks-for-worker-2`);
      assert.deepEqual(pending.json.status, {}, 'another node’s name is not auto-approved');
    } finally {
      node.close();
    }
  });

  it('does not auto-approve a node request from a requester without nodeclient', async () => {
    const m = makeCsr('/O=system:nodes/CN=system:node:worker-3');
    const r = await s.admin.request('POST', CSRS, csrBody('by-someone', m.csrPem, KUBELET_CLIENT, CLIENT_USAGES), { 'impersonate-user': 'someone' });
    // someone may not even create requests.
    assert.equal(r.status, 403, r.text);
    // A user who may create requests but not nodeclient: bound to node-bootstrapper only.
    const b = binding('requesters', 'system:node-bootstrapper', 'requesters');
    assert.equal((await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', b)).status, 201);
    const created = await s.admin.request('POST', CSRS, csrBody('by-requester', m.csrPem, KUBELET_CLIENT, CLIENT_USAGES), {
      'impersonate-user': 'requester',
      'impersonate-group': 'requesters',
    });
    assert.equal(created.status, 201, created.text);
    // A bootstrap request made after it is approved: a pass that approved it saw this one too.
    const later = makeCsr('/O=system:nodes/CN=system:node:worker-4');
    const auth = { authorization: `Bearer ${TOKEN}` };
    assert.equal((await bootstrap.request('POST', CSRS, csrBody('node-csr-worker-4', later.csrPem, KUBELET_CLIENT, CLIENT_USAGES), auth)).status, 201);
    await issued(s, 'node-csr-worker-4');
    assert.deepEqual((await s.admin.request('GET', `${CSRS}/by-requester`)).json.status, {});
  });
});
