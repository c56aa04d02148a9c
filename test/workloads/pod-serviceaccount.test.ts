// kube-apiserver's ServiceAccount admission on pod creates, against a server
// running the serviceaccount and root-ca-cert-publisher controllers as
// kube's control plane does: the `default` account filled in, the projected
// kube-api-access-xxxxx volume mounted where automounting is on, the
// account's image pull secrets, and kube's refusals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const NS = '/api/v1/namespaces/default';
const MOUNT = { readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };

const pod = (name: string, spec: object = {}, metadata: object = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...metadata },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

describe('ServiceAccount admission of pods', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer({ flags: ['--controllers=*'] });

  const create = async (body: object, ns = NS) => {
    const r = await ctx.s.admin.request('POST', `${ns}/pods`, body);
    assert.equal(r.status, 201, r.text);
    return r.json;
  };

  it('gives a pod the default account and its token volume, in every container', async () => {
    await ctx.k.ok(['run', 'web', '--image=nginx:1.27']);
    const p = (await ctx.s.admin.request('GET', `${NS}/pods/web`)).json;
    assert.equal(p.spec.serviceAccountName, 'default');
    assert.equal(p.spec.serviceAccount, 'default');
    const [volume] = p.spec.volumes;
    assert.match(volume.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.equal(
      JSON.stringify(volume.projected),
      JSON.stringify({
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
        defaultMode: 420,
      }),
    );
    assert.deepEqual(p.spec.containers[0].volumeMounts, [{ name: volume.name, ...MOUNT }]);
    const two = await create(
      pod('two', {
        initContainers: [{ name: 'i', image: 'busybox' }],
        containers: [
          { name: 'a', image: 'nginx' },
          { name: 'b', image: 'nginx', volumeMounts: [{ name: 'own', mountPath: MOUNT.mountPath }] },
        ],
        volumes: [{ name: 'own', emptyDir: {} }],
      }),
    );
    const name = two.spec.volumes[1].name;
    assert.deepEqual(two.spec.initContainers[0].volumeMounts, [{ name, ...MOUNT }]);
    assert.deepEqual(two.spec.containers[0].volumeMounts, [{ name, ...MOUNT }]);
    // A container mounting the path itself keeps its own mount.
    assert.deepEqual(two.spec.containers[1].volumeMounts, [{ name: 'own', mountPath: MOUNT.mountPath }]);
  });

  it('mounts nothing where the pod or its account turns automounting off; the pod decides first', async () => {
    assert.equal((await create(pod('no-mount', { automountServiceAccountToken: false }))).spec.volumes, undefined);
    await ctx.k.ok(['create', 'serviceaccount', 'quiet']);
    await ctx.s.admin.request(
      'PATCH',
      `${NS}/serviceaccounts/quiet`,
      { automountServiceAccountToken: false, imagePullSecrets: [{ name: 'registry' }] },
      { 'content-type': 'application/merge-patch+json' },
    );
    const quiet = await create(pod('quiet', { serviceAccountName: 'quiet' }));
    assert.equal(quiet.spec.volumes, undefined);
    assert.deepEqual(quiet.spec.imagePullSecrets, [{ name: 'registry' }]);
    const loud = await create(pod('loud', { serviceAccountName: 'quiet', automountServiceAccountToken: true, imagePullSecrets: [{ name: 'mine' }] }));
    assert.equal(loud.spec.volumes.length, 1);
    assert.deepEqual(loud.spec.imagePullSecrets, [{ name: 'mine' }]);
    // The deprecated field names the account too.
    assert.equal((await create(pod('old-field', { serviceAccount: 'quiet' }))).spec.serviceAccountName, 'quiet');
  });

  it('refuses a pod whose account does not exist, as kube words it', async () => {
    const r = await ctx.k.run(['create', '-f', '-'], JSON.stringify(pod('orphan', { serviceAccountName: 'ghost' })));
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /Error from server \(Forbidden\).*pods "orphan" is forbidden: error looking up service account default\/ghost: serviceaccount "ghost" not found/,
    );
    const gen = await ctx.s.admin.request('POST', `${NS}/pods`, {
      ...pod(''),
      metadata: { generateName: 'gen-' },
      spec: { serviceAccountName: 'ghost', containers: [{ name: 'c', image: 'x' }] },
    });
    assert.equal(gen.status, 403);
    assert.equal(gen.json.message, 'pods "gen-" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');
  });

  it('waits for the default account of a new namespace, and leaves a missing namespace to NamespaceLifecycle', async () => {
    await ctx.k.ok(['create', 'namespace', 'fresh']);
    const p = await create(pod('first'), '/api/v1/namespaces/fresh');
    assert.equal(p.spec.serviceAccountName, 'default');
    const none = await ctx.s.admin.request('POST', '/api/v1/namespaces/nowhere/pods', pod('lost'));
    assert.equal(none.status, 404);
    assert.equal(none.json.message, 'namespaces "nowhere" not found');
  });

  it('keeps the token volume through server-side and client-side apply again, with no diff', async () => {
    const manifest = JSON.stringify(pod('applied', { containers: [{ name: 'c', image: 'nginx:1.27' }] }));
    await ctx.k.ok(['apply', '--server-side', '-f', '-'], manifest);
    const first = (await ctx.s.admin.request('GET', `${NS}/pods/applied`)).json;
    assert.equal(first.spec.volumes.length, 1);
    await ctx.k.ok(['apply', '--server-side', '-f', '-'], manifest);
    const diff = await ctx.k.run(['diff', '--server-side', '-f', '-'], manifest);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    const again = (await ctx.s.admin.request('GET', `${NS}/pods/applied`)).json;
    assert.deepEqual(again.spec.volumes, first.spec.volumes);
    assert.deepEqual(again.spec.containers[0].volumeMounts, first.spec.containers[0].volumeMounts);
    const client = JSON.stringify(pod('applied-csa', { containers: [{ name: 'c', image: 'nginx:1.27' }] }));
    await ctx.k.ok(['apply', '-f', '-'], client);
    const csaDiff = await ctx.k.run(['diff', '-f', '-'], client);
    assert.equal(csaDiff.code, 0, csaDiff.stdout + csaDiff.stderr);
  });

  it('leaves mirror pods as they are', async () => {
    const m = await create(pod('mirror', {}, { annotations: { 'kubernetes.io/config.mirror': 'x' } }));
    assert.equal(m.spec.serviceAccountName, undefined);
    assert.equal(m.spec.volumes, undefined);
  });
});
