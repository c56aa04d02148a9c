// kubectl against CertificateSigningRequests: create -f, get csr (kube's
// columns), certificate approve and deny (the /approval subresource), explain,
// and the issued certificate fetched with jsonpath as the user guide does.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { runCertsCommand } from '../../certs/cli.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { hasKubectl, hasOpenssl, kubectlAdmin, makeCsr, writeTemp } from './csrkit.js';

const manifest = (name: string, pem: string, extra = '') => `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: ${name}
spec:
  request: ${Buffer.from(pem).toString('base64')}
  signerName: kubernetes.io/kube-apiserver-client
  usages:
  - client auth
${extra}`;

describe('kubectl and CertificateSigningRequests', { skip: hasKubectl && hasOpenssl ? false : 'kubectl or openssl is not installed' }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--controllers=-csrapproving,-csrcleaner,-serviceaccount,-root-ca-cert-publisher,*'] });
  });
  after(async () => {
    await s?.close();
  });

  it('creates, lists, approves, denies and reads the issued certificate', async () => {
    const jane = makeCsr('/O=devs/CN=jane');
    let r = await kubectlAdmin(s, ['create', '-f', writeTemp('jane.yaml', manifest('jane', jane.csrPem, '  expirationSeconds: 86400\n'))]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'certificatesigningrequest.certificates.k8s.io/jane created');
    r = await kubectlAdmin(s, ['create', '-f', writeTemp('joe.yaml', manifest('joe', makeCsr('/CN=joe').csrPem))]);
    assert.equal(r.code, 0, r.stderr);

    r = await kubectlAdmin(s, ['get', 'csr']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION$/);
    assert.match(
      lines.find((l) => l.startsWith('jane'))!,
      /^jane\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+admin\s+24h\s+Pending$/,
    );
    assert.match(
      lines.find((l) => l.startsWith('joe'))!,
      /^joe\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+admin\s+<none>\s+Pending$/,
    );

    r = await kubectlAdmin(s, ['certificate', 'approve', 'jane']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'certificatesigningrequest.certificates.k8s.io/jane approved');
    r = await kubectlAdmin(s, ['certificate', 'deny', 'joe']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'certificatesigningrequest.certificates.k8s.io/joe denied');
    // kubectl itself refuses to deny an approved request (the server's refusal is in api.test.ts).
    r = await kubectlAdmin(s, ['certificate', 'deny', 'jane']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /certificate signing request "jane" is already Approved/);

    const cert = await eventually(
      'jane issued',
      async () => {
        const out = await kubectlAdmin(s, ['get', 'csr', 'jane', '-o', 'jsonpath={.status.certificate}']);
        return out.code === 0 && out.stdout !== '' ? out.stdout : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.match(Buffer.from(cert, 'base64').toString(), /^-----BEGIN CERTIFICATE-----/);
    // gatehouse certs writes jane's kubeconfig from the request's name and her key; kubectl then is jane.
    const out = join(s.dataDir, 'jane.kubeconfig');
    const said: string[] = [];
    const code = await runCertsCommand(
      ['csr-kubeconfig', '--name', 'jane', '--key', writeTemp('jane.key', jane.keyPem), '--kubeconfig', s.kubeconfig, '--out', out],
      {
        out: (l) => said.push(l),
        err: (l) => said.push(l),
      },
    );
    assert.equal(code, 0, said.join('\n'));
    assert.deepEqual(said, [`kubeconfig for user "jane" from the request "jane": ${out}`]);
    const who = await kubectlAdmin(s, ['--kubeconfig', out, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'jane ["devs","system:authenticated"]');
    // A request without a certificate is refused, naming why.
    const pending: string[] = [];
    const refused = await runCertsCommand(
      ['csr-kubeconfig', '--name', 'joe', '--key', writeTemp('k', jane.keyPem), '--kubeconfig', s.kubeconfig, '--out', `${out}.joe`],
      {
        out: (l) => pending.push(l),
        err: (l) => pending.push(l),
      },
    );
    assert.equal(refused, 1);
    assert.deepEqual(pending, ['gatehouse certs: the request "joe" has no certificate yet (conditions: Denied)']);

    r = await kubectlAdmin(s, ['get', 'csr']);
    assert.match(
      r.stdout.split('\n').find((l) => l.startsWith('jane'))!,
      /Approved,Issued$/,
    );
    assert.match(
      r.stdout.split('\n').find((l) => l.startsWith('joe'))!,
      /Denied$/,
    );
    r = await kubectlAdmin(s, ['get', 'csr', '--field-selector', 'spec.signerName=kubernetes.io/kube-apiserver-client', '-o', 'name']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), [
      'certificatesigningrequest.certificates.k8s.io/jane',
      'certificatesigningrequest.certificates.k8s.io/joe',
    ]);
  });

  it('explains the type and finds it by its short name', async () => {
    const r = await kubectlAdmin(s, ['explain', 'csr.spec.expirationSeconds']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /GROUP:\s+certificates\.k8s\.io/);
    assert.match(r.stdout, /The minimum valid value for expirationSeconds is 600/);
    const res = await kubectlAdmin(s, ['api-resources', '--api-group=certificates.k8s.io']);
    assert.match(res.stdout, /certificatesigningrequests\s+csr\s+certificates\.k8s\.io\/v1\s+false\s+CertificateSigningRequest/);
  });
});
