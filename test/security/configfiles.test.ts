// Configuration files are data too: a key named __proto__ or
// constructor in AuthenticationConfiguration, AuthorizationConfiguration, an
// ABAC policy or a kubeconfig is an ordinary key — an unknown field where the
// format is strict, ignored or kept where it is not — and never reaches a
// prototype.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAuthenticationConfig } from '../../gateway/config/authnconfig.js';
import { parseAuthorizationConfig } from '../../gateway/authz/config.js';
import { parsePolicyFile } from '../../gateway/authz/abac.js';
import { loadKubeconfig } from '../../lib/kubeconfig/index.js';

const clean = (): void => {
  const o: Record<string, unknown> = {};
  assert.equal(o['polluted'], undefined);
  assert.equal(Object.getOwnPropertyNames(Object.prototype).includes('polluted'), false);
};

describe('configuration files with prototype keys', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-proto-config-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('AuthenticationConfiguration: __proto__ is an unknown field at the root and inside a JWT authenticator', () => {
    const text = `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
__proto__: {polluted: yes}
jwt:
- issuer:
    url: https://issuer.example.com
    audiences: [gatehouse]
    __proto__: {polluted: yes}
  claimMappings:
    username: {claim: sub, prefix: ""}
    constructor: {prototype: {polluted: yes}}
`;
    const r = parseAuthenticationConfig(text, 'authn.yaml');
    assert.ok('error' in r);
    for (const f of ['__proto__: unknown field', 'jwt[0].issuer.__proto__: unknown field', 'jwt[0].claimMappings.constructor: unknown field'])
      assert.ok(r.error.includes(f), r.error);
    clean();
  });

  it('AuthorizationConfiguration: __proto__ and constructor are unknown fields', () => {
    const r = parseAuthorizationConfig(
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n__proto__: {polluted: yes}\nauthorizers:\n- type: RBAC\n  name: rbac\n  constructor: {prototype: {polluted: yes}}\n',
      'authz.yaml',
    );
    assert.ok('error' in r);
    assert.ok(r.error.includes('__proto__: unknown field') && r.error.includes('authorizers[0].constructor: unknown field'), r.error);
    clean();
  });

  it('ABAC: a policy line with __proto__ is refused as an unknown field', () => {
    for (const line of [
      '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","__proto__":{"readonly":false}}}',
      '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","__proto__":{"polluted":"yes"},"spec":{"user":"alice"}}',
    ]) {
      assert.throws(
        () => parsePolicyFile(`${line}\n`),
        (err: Error) => err.message.includes('__proto__: unknown field'),
      );
    }
    clean();
  });

  it('kubeconfig: prototype keys are ignored like any unknown key, and an exec env named __proto__ is kept', async () => {
    const file = join(dir, 'kubeconfig');
    await writeFile(
      file,
      `apiVersion: v1
kind: Config
__proto__: {polluted: yes}
current-context: c
clusters:
- name: k
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true, __proto__: {polluted: yes}}
users:
- name: u
  user:
    constructor: {prototype: {polluted: yes}}
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /bin/true
      interactiveMode: Never
      env: [{name: __proto__, value: x}]
contexts:
- name: c
  context: {cluster: k, user: u}
`,
    );
    const cfg = await loadKubeconfig(file);
    assert.equal(cfg.cluster.insecureSkipTlsVerify, true);
    assert.deepEqual(cfg.user.exec?.env, [{ name: '__proto__', value: 'x' }]);
    clean();
  });
});
