// The CertificateSigningRequest API over HTTPS: discovery, validation of every
// spec field, the requester fields the server sets, the immutable spec, the
// /approval and /status subresources with kube's approve and sign checks,
// CertificateSubjectRestriction, the field selector and the printer columns.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { asUser, CLIENT_USAGES, csrBody, CSRS, hasOpenssl, makeCsr, withCondition } from './csrkit.js';

const CLIENT = 'kubernetes.io/kube-apiserver-client';

function causes(r: { json: any }): string[] {
  return (r.json?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`);
}

describe('CertificateSigningRequests', { skip: hasOpenssl ? false : 'openssl is not installed' }, () => {
  let s: TestServer;
  const alice = hasOpenssl ? makeCsr('/O=devs/CN=alice') : { csrPem: '', keyPem: '' };
  before(async () => {
    // Controllers off: these tests look at the API alone (the signer is tested in signing.test.ts).
    s = await startTestServer({ flags: ['--controllers=-csrsigning,-csrapproving,-csrcleaner,-serviceaccount,-root-ca-cert-publisher,*'] });
  });
  after(async () => {
    await s?.close();
  });

  it('is discovered as certificates.k8s.io/v1 with short name csr and both subresources', async () => {
    const r = await s.admin.request('GET', '/apis/certificates.k8s.io/v1');
    assert.equal(r.status, 200, r.text);
    const names = r.json.resources.map((x: any) => x.name);
    assert.deepEqual(names.sort(), ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status']);
    const main = r.json.resources.find((x: any) => x.name === 'certificatesigningrequests');
    assert.deepEqual(main.shortNames, ['csr']);
    assert.equal(main.namespaced, false);
    const openapi = await s.admin.request('GET', '/openapi/v3/apis/certificates.k8s.io/v1');
    assert.equal(openapi.status, 200);
    assert.ok(openapi.json.components.schemas['io.k8s.api.certificates.v1.CertificateSigningRequestSpec']);
  });

  it('sets the requester from the authenticated user, ignoring what the client wrote, and starts with an empty status', async () => {
    // The bootstrap policy's system:node-bootstrapper lets team-a create requests.
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'team-a-requests' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-bootstrapper' },
      subjects: [{ kind: 'Group', name: 'team-a', apiGroup: 'rbac.authorization.k8s.io' }],
    };
    assert.equal((await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding)).status, 201);
    const body = csrBody('req-1', alice.csrPem, CLIENT, CLIENT_USAGES, {
      username: 'mallory',
      groups: ['system:masters'],
      uid: 'x',
      extra: { __proto__: ['a'] },
    });
    (body as any).status = { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'AAAA' };
    const r = await s.admin.request('POST', CSRS, body, asUser('bob', ['team-a']));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.spec.username, 'bob');
    assert.deepEqual(r.json.spec.groups, ['team-a', 'system:authenticated']);
    assert.equal(r.json.spec.uid, undefined);
    assert.equal(r.json.spec.extra, undefined);
    assert.deepEqual(r.json.status, {});
    // The requester's extra keys are data, `__proto__` included.
    const withExtra = await s.admin.request('POST', CSRS, csrBody('req-extra', alice.csrPem, CLIENT, CLIENT_USAGES), {
      ...asUser('bob', ['team-a']),
      'impersonate-extra-__proto__': 'polluted',
      'impersonate-extra-scopes': ['a', 'b'],
    });
    assert.equal(withExtra.status, 201, withExtra.text);
    assert.deepEqual(Object.entries(withExtra.json.spec.extra), [
      ['__proto__', ['polluted']],
      ['scopes', ['a', 'b']],
    ]);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('refuses each invalid spec field with kube’s causes', async () => {
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['missing signerName', csrBody('v1', alice.csrPem, '', CLIENT_USAGES), /spec\.signerName: Required value/],
      [
        'malformed signerName',
        csrBody('v2', alice.csrPem, 'nodomain', CLIENT_USAGES),
        /spec\.signerName: Invalid value: "nodomain": must be a fully qualified domain and path/,
      ],
      ['one-label domain', csrBody('v3', alice.csrPem, 'example/signer', CLIENT_USAGES), /should be a domain with at least two segments/],
      [
        'legacy signer',
        csrBody('v4', alice.csrPem, 'kubernetes.io/legacy-unknown', CLIENT_USAGES),
        /the legacy signerName is not allowed via this API version/,
      ],
      ['no usages', csrBody('v5', alice.csrPem, CLIENT, []), /spec\.usages: Required value: usages must be provided/],
      ['unknown usage', csrBody('v6', alice.csrPem, CLIENT, ['client auth', 'flying']), /spec\.usages\[1\]: Unsupported value: "flying"/],
      ['duplicate usage', csrBody('v7', alice.csrPem, CLIENT, ['client auth', 'client auth']), /spec\.usages\[1\]: Duplicate value: "client auth"/],
      [
        'short expiration',
        csrBody('v8', alice.csrPem, CLIENT, CLIENT_USAGES, { expirationSeconds: 599 }),
        /spec\.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds/,
      ],
      [
        'not PEM',
        { ...csrBody('v9', '', CLIENT, CLIENT_USAGES), spec: { request: Buffer.from('hello').toString('base64'), signerName: CLIENT, usages: CLIENT_USAGES } },
        /spec\.request: .*PEM block type must be CERTIFICATE REQUEST/,
      ],
      [
        'a certificate, not a request',
        csrBody('v10', alice.csrPem.replace(/CERTIFICATE REQUEST/g, 'CERTIFICATE'), CLIENT, CLIENT_USAGES),
        /PEM block type must be CERTIFICATE REQUEST/,
      ],
    ];
    for (const [what, body, want] of bad) {
      const r = await s.admin.request('POST', CSRS, body);
      assert.equal(r.status, 422, `${what}: ${r.text}`);
      assert.equal(r.json.reason, 'Invalid');
      assert.match(causes(r).join('\n'), want, what);
    }
  });

  it('refuses a request whose signature does not verify, a 1 MiB request and a DSA key, naming why', async () => {
    const der = Buffer.from(alice.csrPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    der[der.length - 10]! ^= 0xff; // inside the signature
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    let r = await s.admin.request('POST', CSRS, csrBody('sig', tampered, CLIENT, CLIENT_USAGES));
    assert.equal(r.status, 422, r.text);
    assert.match(causes(r).join(), /spec\.request: .*(verification|ECDSA)/);
    // A P-256 point off the curve: refused by the key import, whichever way the create imports it.
    const offCurve = Buffer.from(alice.csrPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    offCurve[offCurve.indexOf(Buffer.from([0x03, 0x42, 0x00, 0x04])) + 3 + 64]! ^= 0x01;
    r = await s.admin.request(
      'POST',
      CSRS,
      csrBody('off-curve', `-----BEGIN CERTIFICATE REQUEST-----\n${offCurve.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`, CLIENT, CLIENT_USAGES),
    );
    assert.equal(r.status, 422, r.text);
    assert.match(causes(r).join(), /spec\.request: .*unsupported public key algorithm/);
    const huge = `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.alloc(1 << 20, 7).toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    r = await s.admin.request('POST', CSRS, csrBody('huge', huge, CLIENT, CLIENT_USAGES));
    assert.equal(r.status, 422, r.text.slice(0, 300));
    assert.match(causes(r).join(), /spec\.request: .*malformed certificate request/);
    const dsa = makeCsr('/CN=dsa', 'dsa');
    r = await s.admin.request('POST', CSRS, csrBody('dsa', dsa.csrPem, CLIENT, CLIENT_USAGES));
    assert.equal(r.status, 422, r.text);
    assert.match(causes(r).join(), /spec\.request: .*algorithm unimplemented/);
    // Each key type has its own import path (spki.ts): each must verify, and refuse a signature that does not.
    for (const k of ['rsa:2048', 'ec:P-384', 'ec:P-521', 'ed25519'] as const) {
      const ok = makeCsr(`/CN=key-${k}`, k);
      const name = `key-${k.replace(':', '-').toLowerCase()}`;
      r = await s.admin.request('POST', CSRS, csrBody(name, ok.csrPem, CLIENT, CLIENT_USAGES));
      assert.equal(r.status, 201, `${k}: ${r.text}`);
      const bad = Buffer.from(ok.csrPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
      bad[bad.length - 3]! ^= 0x01; // the signature's last bytes
      const pem = `-----BEGIN CERTIFICATE REQUEST-----\n${bad.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
      r = await s.admin.request('POST', CSRS, csrBody(`${name}-bad`, pem, CLIENT, CLIENT_USAGES));
      assert.equal(r.status, 422, `${k}: ${r.text}`);
      assert.match(causes(r).join(), /spec\.request: .*verification/, k);
    }
  });

  it('refuses a kube-apiserver-client request for system:masters (CertificateSubjectRestriction)', async () => {
    const m = makeCsr('/O=system:masters/CN=eve');
    const r = await s.admin.request('POST', CSRS, csrBody('masters', m.csrPem, CLIENT, CLIENT_USAGES));
    assert.equal(r.status, 403, r.text);
    assert.equal(
      r.json.message,
      'certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
    const other = await s.admin.request('POST', CSRS, csrBody('masters-custom', m.csrPem, 'example.com/custom', CLIENT_USAGES));
    assert.equal(other.status, 201, other.text);
  });

  it('keeps the spec on update and status out of the main resource', async () => {
    const created = await s.admin.request('POST', CSRS, csrBody('immutable', alice.csrPem, CLIENT, CLIENT_USAGES));
    assert.equal(created.status, 201, created.text);
    const changed = {
      ...created.json,
      metadata: { ...created.json.metadata, labels: { a: 'b' } },
      spec: { ...created.json.spec, usages: ['server auth'], username: 'x' },
    };
    const withStatus = withCondition(changed, 'Approved');
    const r = await s.admin.request('PUT', `${CSRS}/immutable`, withStatus);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.metadata.labels, { a: 'b' });
    assert.deepEqual(r.json.spec, created.json.spec);
    assert.deepEqual(r.json.status, {});
  });

  it('approves and denies through /approval only with approve on the signer (or its domain wildcard)', async () => {
    const created = await s.admin.request('POST', CSRS, csrBody('approve-me', alice.csrPem, CLIENT, CLIENT_USAGES));
    assert.equal(created.status, 201, created.text);
    // carol may update approvals but not approve this signer yet.
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'csr-approval-update' },
      rules: [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval'], verbs: ['get', 'update'] },
      ],
    };
    assert.equal((await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role)).status, 201);
    const bind = (name: string, roleName: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [{ kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    assert.equal(
      (await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', bind('carol-update', 'csr-approval-update'))).status,
      201,
    );
    const approved = withCondition(created.json, 'Approved');
    let r = await s.admin.request('PUT', `${CSRS}/approve-me/approval`, approved, asUser('carol'));
    assert.equal(r.status, 403, r.text);
    assert.equal(
      r.json.message,
      'certificatesigningrequests.certificates.k8s.io "approve-me" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"',
    );
    const wildcard = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'approve-kubernetes-io' },
      rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kubernetes.io/*'], verbs: ['approve'] }],
    };
    assert.equal((await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', wildcard)).status, 201);
    assert.equal(
      (await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', bind('carol-approve', 'approve-kubernetes-io'))).status,
      201,
    );
    r = await s.admin.request('PUT', `${CSRS}/approve-me/approval`, approved, asUser('carol'));
    assert.equal(r.status, 200, r.text);
    const cond = r.json.status.conditions[0];
    assert.equal(cond.type, 'Approved');
    assert.ok(cond.lastUpdateTime && cond.lastTransitionTime, 'the server stamps the condition');
    // Denying an approved request is refused; removing a condition too.
    const latest = r.json;
    r = await s.admin.request('PUT', `${CSRS}/approve-me/approval`, withCondition(latest, 'Denied'));
    assert.equal(r.status, 422, r.text);
    assert.match(causes(r).join(), /Approved and Denied conditions are mutually exclusive/);
    r = await s.admin.request('PUT', `${CSRS}/approve-me/approval`, { ...latest, status: { conditions: [] } });
    assert.equal(r.status, 422, r.text);
    assert.match(causes(r).join(), /updates may not remove a condition of type "Approved"/);
  });

  it('sets status.certificate only through /status, only once approved, and only with sign on the signer', async () => {
    const created = await s.admin.request('POST', CSRS, csrBody('sign-me', alice.csrPem, 'example.com/custom', CLIENT_USAGES));
    assert.equal(created.status, 201, created.text);
    const adminCert = (await import('node:fs')).readFileSync(s.kubeconfig, 'utf8').match(/client-certificate-data: (\S+)/)![1]!;
    const issued = { ...created.json, status: { certificate: adminCert } };
    let r = await s.admin.request('PUT', `${CSRS}/sign-me/status`, issued);
    assert.equal(r.status, 422, r.text);
    assert.match(causes(r).join(), /status\.certificate: Forbidden: a certificate may only be set on an approved request/);
    // /status cannot add an approval.
    r = await s.admin.request('PUT', `${CSRS}/sign-me/status`, withCondition(created.json, 'Approved'));
    assert.equal(r.status, 422, r.text);
    assert.match(causes(r).join(), /updates may not add a condition of type "Approved"/);
    const approved = await s.admin.request('PUT', `${CSRS}/sign-me/approval`, withCondition(created.json, 'Approved'));
    assert.equal(approved.status, 200, approved.text);
    // The main resource drops status.
    r = await s.admin.request('PUT', `${CSRS}/sign-me`, { ...approved.json, status: { ...approved.json.status, certificate: adminCert } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status.certificate, undefined);
    // dave may update status but not sign.
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'csr-status' },
      rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/status'], verbs: ['update'] }],
    };
    assert.equal((await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role)).status, 201);
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'dave-status' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-status' },
      subjects: [{ kind: 'User', name: 'dave', apiGroup: 'rbac.authorization.k8s.io' }],
    };
    assert.equal((await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding)).status, 201);
    const signed = { ...approved.json, status: { ...approved.json.status, certificate: adminCert } };
    r = await s.admin.request('PUT', `${CSRS}/sign-me/status`, signed, asUser('dave'));
    assert.equal(r.status, 403, r.text);
    assert.match(r.json.message, /user not permitted to sign requests with signerName "example.com\/custom"/);
    r = await s.admin.request('PUT', `${CSRS}/sign-me/status`, signed);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status.certificate, adminCert);
    assert.equal(r.json.status.conditions[0].type, 'Approved', 'the approval stays');
    r = await s.admin.request('PUT', `${CSRS}/sign-me/status`, {
      ...r.json,
      status: { ...r.json.status, certificate: Buffer.from('junk').toString('base64') },
    });
    assert.equal(r.status, 422, r.text);
    assert.match(causes(r).join(), /updates may not modify existing certificate content/);
  });

  it('validates conditions and the certificate as kube does', async () => {
    const created = await s.admin.request('POST', CSRS, csrBody('conditions', alice.csrPem, 'example.com/custom', CLIENT_USAGES));
    assert.equal(created.status, 201, created.text);
    const put = (sub: string, status: Record<string, unknown>) => s.admin.request('PUT', `${CSRS}/conditions/${sub}`, { ...created.json, status });
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [
        'approval',
        { conditions: [{ type: 'Approved', status: 'False' }] },
        /status\.conditions\[0\]\.status: Unsupported value: "False": supported values: "True"/,
      ],
      ['approval', { conditions: [{ status: 'True' }] }, /status\.conditions\[0\]\.type: Required value/],
      [
        'approval',
        {
          conditions: [
            { type: 'Approved', status: 'True' },
            { type: 'Approved', status: 'True' },
          ],
        },
        /status\.conditions\[1\]\.type: Duplicate value: "Approved"/,
      ],
      ['approval', { conditions: [{ type: 'Custom', status: 'Maybe' }] }, /supported values: "False", "True", "Unknown"/],
      [
        'status',
        {
          conditions: [{ type: 'Failed', status: 'True' }],
          certificate: Buffer.from('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n').toString('base64'),
        },
        /status\.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"/,
      ],
      ['status', { certificate: Buffer.from('not pem').toString('base64') }, /must contain at least one CERTIFICATE PEM block/],
    ];
    for (const [sub, status, want] of cases) {
      const r = await put(sub, status);
      assert.equal(r.status, 422, `${sub} ${JSON.stringify(status)}: ${r.text}`);
      assert.match(causes(r).join('\n'), want);
    }
    // A Failed condition (a signer's verdict) may be added through /status, and not removed after.
    const failed = await put('status', { conditions: [{ type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: 'no' }] });
    assert.equal(failed.status, 200, failed.text);
    const removed = await s.admin.request('PUT', `${CSRS}/conditions/status`, { ...failed.json, status: {} });
    assert.equal(removed.status, 422, removed.text);
    assert.match(causes(removed).join(), /updates may not remove a condition of type "Failed"/);
  });

  it('selects by spec.signerName and prints kube’s columns', async () => {
    const r = await s.admin.request('GET', `${CSRS}?fieldSelector=spec.signerName%3Dexample.com%2Fcustom`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.items.map((i: any) => i.metadata.name).sort(), ['conditions', 'masters-custom', 'sign-me']);
    const t = await s.admin.request('GET', `${CSRS}/sign-me`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(t.status, 200, t.text);
    assert.deepEqual(
      t.json.columnDefinitions.map((c: any) => c.name),
      ['Name', 'Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition'],
    );
    const cells = t.json.rows[0].cells;
    assert.deepEqual([cells[0], cells[2], cells[3], cells[4], cells[5]], ['sign-me', 'example.com/custom', 'admin', '<none>', 'Approved,Issued']);
  });
});
