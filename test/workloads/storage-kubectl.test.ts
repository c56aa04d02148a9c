// storage.k8s.io/v1 StorageClasses and node.k8s.io/v1 RuntimeClasses through
// kubectl against a started server: defaults, `kubectl get sc` with the
// default class marked, runtime class columns, and kube's update rules.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const MANIFEST = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: ebs.csi.aws.com
parameters: {type: gp3}
allowVolumeExpansion: true
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: slow}
provisioner: kubernetes.io/no-provisioner
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
`;

describe('storage.k8s.io/v1 and node.k8s.io/v1 with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('applies, defaults and shows kube columns', async () => {
    await ctx.k.ok(['apply', '--server-side', '-f', '-'], MANIFEST);
    const diff = await ctx.k.run(['diff', '--server-side', '-f', '-'], MANIFEST);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    const fast = (await ctx.s.admin.request('GET', '/apis/storage.k8s.io/v1/storageclasses/fast')).json;
    assert.equal(fast.reclaimPolicy, 'Delete');
    assert.equal(fast.volumeBindingMode, 'Immediate');
    const lines = (await ctx.k.ok(['get', 'sc'])).trim().split('\n');
    assert.deepEqual(lines[0]!.trim().split(/\s{2,}/), ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE']);
    assert.deepEqual(
      lines[1]!
        .trim()
        .split(/\s{2,}/)
        .slice(0, 5),
      ['fast (default)', 'ebs.csi.aws.com', 'Delete', 'Immediate', 'true'],
    );
    assert.deepEqual(
      lines[2]!
        .trim()
        .split(/\s{2,}/)
        .slice(0, 5),
      ['slow', 'kubernetes.io/no-provisioner', 'Retain', 'WaitForFirstConsumer', 'false'],
    );
    const rc = (await ctx.k.ok(['get', 'runtimeclass'])).trim().split('\n');
    assert.deepEqual(rc[0]!.trim().split(/\s{2,}/), ['NAME', 'HANDLER', 'AGE']);
    assert.deepEqual(
      rc[1]!
        .trim()
        .split(/\s{2,}/)
        .slice(0, 2),
      ['gvisor', 'runsc'],
    );
  });

  it('refuses the updates kube refuses', async () => {
    const r = await ctx.k.run(['patch', 'sc', 'fast', '--type=merge', '-p', '{"parameters":{"type":"io2"},"reclaimPolicy":"Retain"}']);
    assert.match(r.stderr, /parameters: Forbidden: updates to parameters are forbidden./);
    assert.match(r.stderr, /reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden./);
    const ok = await ctx.k.run(['patch', 'sc', 'fast', '--type=json', '-p', '[{"op":"replace","path":"/allowVolumeExpansion","value":false}]']);
    assert.equal(ok.code, 0, ok.stderr);
    const h = await ctx.k.run(['patch', 'runtimeclass', 'gvisor', '--type=strategic', '-p', '{"handler":"kata"}']);
    assert.match(h.stderr, /handler: Invalid value: "kata": field is immutable/);
    const bad = await ctx.k.run(['create', '-f', '-'], 'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: bad}\nhandler: Not_A_Label\n');
    assert.match(bad.stderr, /handler: Invalid value: "Not_A_Label": a lowercase RFC 1123 label/);
    await ctx.k.ok(['delete', '-f', '-'], MANIFEST);
  });
});
