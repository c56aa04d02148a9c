import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { generateCa, generateClientCert } from '../../certs/pki.js';
import { ConfigError } from '../../lib/config/error.js';
import { loadKubeconfig } from '../../lib/kubeconfig/index.js';

const ca = generateCa('load-test-ca');
const client = generateClientCert(ca, { user: 'webhook-client' });
const b64 = (s: string) => Buffer.from(s).toString('base64');
let dir = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-kubeconfig-'));
  await mkdir(join(dir, 'certs'));
  await writeFile(join(dir, 'certs', 'ca.crt'), ca.certPem);
  await writeFile(join(dir, 'certs', 'client.crt'), client.certPem);
  await writeFile(join(dir, 'certs', 'client.key'), client.keyPem);
  await writeFile(join(dir, 'token'), 'from-a-file\n');
});
after(() => rm(dir, { recursive: true, force: true }));

async function load(doc: unknown, name = 'config'): Promise<ReturnType<typeof loadKubeconfig>> {
  const file = join(dir, name);
  await writeFile(file, typeof doc === 'string' ? doc : stringify(doc));
  return loadKubeconfig(file);
}

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'remote', cluster: { server: 'https://127.0.0.1:9443/authenticate', ...cluster } }],
    users: [{ name: 'me', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'remote', user: 'me' } }],
    'current-context': 'ctx',
    ...extra,
  };
}

describe('kubeconfig loading', () => {
  it('reads files named relative to the kubeconfig directory', async () => {
    const c = await load(
      kubeconfig({ 'certificate-authority': 'certs/ca.crt' }, { 'client-certificate': 'certs/client.crt', 'client-key': 'certs/client.key' }),
    );
    assert.equal(c.cluster.server, 'https://127.0.0.1:9443/authenticate');
    assert.equal(c.cluster.caPem, ca.certPem);
    assert.equal(c.user.clientCertPem, client.certPem);
    assert.equal(c.user.clientKeyPem, client.keyPem);
    assert.equal(c.context, 'ctx');
    assert.ok(Object.isFrozen(c));
  });

  it('reads the base64 data forms', async () => {
    const c = await load(
      kubeconfig({ 'certificate-authority-data': b64(ca.certPem) }, { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) }),
    );
    assert.equal(c.cluster.caPem, ca.certPem);
    assert.equal(c.user.clientKeyPem, client.keyPem);
  });

  it('keeps a token, resolves a token file and reads insecure-skip-tls-verify', async () => {
    const c = await load(kubeconfig({ 'insecure-skip-tls-verify': true }, { token: 'abc' }));
    assert.equal(c.user.token, 'abc');
    assert.equal(c.cluster.insecureSkipTlsVerify, true);
    const f = await load(kubeconfig({}, { tokenFile: 'token' }));
    assert.equal(f.user.tokenFile, join(dir, 'token'));
  });

  it('uses the only context when current-context is missing', async () => {
    const doc = kubeconfig({}, {});
    delete (doc as Record<string, unknown>)['current-context'];
    assert.equal((await load(doc)).context, 'ctx');
  });

  it('reads an exec block and resolves a relative command against the kubeconfig directory', async () => {
    const c = await load(
      kubeconfig(
        {
          extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'gatehouse' } }],
        },
        {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: './bin/plugin',
            args: ['--x'],
            env: [{ name: 'A', value: 'b' }],
            interactiveMode: 'Never',
            provideClusterInfo: true,
          },
        },
      ),
    );
    assert.equal(c.user.exec?.command, join(dir, 'bin', 'plugin'));
    assert.deepEqual(c.user.exec?.args, ['--x']);
    assert.equal(c.user.exec?.interactiveMode, 'Never');
    assert.equal(c.user.exec?.provideClusterInfo, true);
    assert.deepEqual(c.cluster.execConfig, { audience: 'gatehouse' });
  });

  it('defaults interactiveMode to IfAvailable for v1beta1 and leaves a bare command to PATH', async () => {
    const c = await load(kubeconfig({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws' } }));
    assert.equal(c.user.exec?.interactiveMode, 'IfAvailable');
    assert.equal(c.user.exec?.command, 'aws');
  });

  const bad: Array<[string, unknown, RegExp]> = [
    [
      'a missing file named by the user',
      kubeconfig({}, { 'client-certificate': 'nope.crt', 'client-key': 'certs/client.key' }),
      /users\[0\]\.user\.client-certificate: file ".*nope\.crt" cannot be read: ENOENT/,
    ],
    ['a certificate without its key', kubeconfig({}, { 'client-certificate': 'certs/client.crt' }), /client-certificate and client-key must be given together/],
    ['a server that is not a URL', kubeconfig({ server: 'not a url' }, {}), /clusters\[0\]\.cluster\.server: "not a url" is not a URL/],
    [
      'a v1 exec block without interactiveMode',
      kubeconfig({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'x' } }),
      /interactiveMode: required for client\.authentication\.k8s\.io\/v1/,
    ],
    [
      'an unknown exec apiVersion',
      kubeconfig({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'x' } }),
      /exec\.apiVersion: "client\.authentication\.k8s\.io\/v1alpha1" is not one of/,
    ],
    ['an unknown context', kubeconfig({}, {}, { 'current-context': 'other' }), /current-context: no context named "other"/],
    [
      'a CA together with insecure-skip-tls-verify',
      kubeconfig({ 'certificate-authority': 'certs/ca.crt', 'insecure-skip-tls-verify': true }, {}),
      /must not be set together with a certificate authority/,
    ],
    ['data that is not PEM', kubeconfig({ 'certificate-authority-data': b64('hello') }, {}), /certificate-authority-data: must be base64-encoded PEM/],
    ['basic auth', kubeconfig({}, { username: 'a', password: 'b' }), /users\[0\]\.user\.username: not supported/],
    ['text that is not YAML', 'clusters: [', /not valid YAML/],
  ];
  for (const [what, doc, message] of bad) {
    it(`refuses ${what} naming the field`, async () => {
      await assert.rejects(load(doc), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }

  it('refuses a file that does not exist', async () => {
    await assert.rejects(loadKubeconfig(join(dir, 'absent')), /kubeconfig ".*absent" cannot be read: ENOENT/);
  });
});
