// kubectl against the server: label, annotate, patch (json, merge, strategic,
// status), client-side apply twice, edit, explain, and --validate levels.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { findKubectl } from '../e2e/helpers.js';

const kubectl = findKubectl();
let s: TestServer;
let dir: string;
before(async () => {
  s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-kubectl-patch-'));
});
after(async () => {
  await s?.close();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function k(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) =>
    execFile(kubectl!, ['--kubeconfig', s.kubeconfig, '-n', 'default', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
}
async function ok(args: string[], env?: Record<string, string>): Promise<string> {
  const r = await k(args, env);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
async function manifest(name: string, obj: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(obj));
  return path;
}
const pod = (labels: Record<string, string>, image: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'kp', labels },
  spec: {
    containers: [
      { name: 'main', image, env: [{ name: 'A', value: '1' }] },
      { name: 'side', image: 'busybox' },
    ],
  },
});
const get = async (what: string, path: string) => ok(['get', what, '-o', `jsonpath={${path}}`]);

describe('kubectl patches', { skip: kubectl ? false : 'kubectl not found' }, () => {
  it('creates and re-applies a pod with kubectl apply (strategic merge with the last-applied annotation)', async () => {
    assert.match(await ok(['apply', '-f', await manifest('p1.json', pod({ app: 'a' }, 'nginx:1'))]), /created/);
    const r = await k(['apply', '-f', await manifest('p2.json', pod({ app: 'a', tier: 'web' }, 'nginx:2'))]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /configured/);
    assert.doesNotMatch(r.stderr, /error calculating patch/);
    assert.equal(await get('pod/kp', '.spec.containers[0].image'), 'nginx:2');
    assert.equal(await get('pod/kp', '.metadata.labels.tier'), 'web');
    assert.match(await get('pod/kp', '.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration'), /nginx:2/);
  });
  it('labels and annotates', async () => {
    await ok(['label', 'pod/kp', 'x=y']);
    await ok(['annotate', 'pod/kp', 'note=hi']);
    await ok(['label', 'pod/kp', 'x-']);
    assert.equal(await get('pod/kp', '.metadata.annotations.note'), 'hi');
    assert.equal(await get('pod/kp', '.metadata.labels.x'), '');
  });
  it('patches with --type=json, merge and strategic', async () => {
    await ok(['patch', 'pod/kp', '--type=json', '-p', '[{"op":"add","path":"/metadata/labels/j","value":"1"}]']);
    await ok(['patch', 'pod/kp', '--type=merge', '-p', '{"metadata":{"labels":{"m":"1"}}}']);
    await ok(['patch', 'pod/kp', '--type=strategic', '-p', '{"spec":{"containers":[{"name":"side","image":"busybox:2"}]}}']);
    assert.equal(await get('pod/kp', '.spec.containers[1].image'), 'busybox:2');
    assert.equal(await get('pod/kp', '.metadata.labels.j'), '1');
    assert.equal(await get('pod/kp', '.metadata.labels.m'), '1');
  });
  it('patches the status subresource', async () => {
    await ok(['patch', 'pod/kp', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"}}']);
    assert.equal(await get('pod/kp', '.status.phase'), 'Running');
  });
  it('reports a failed JSON patch test', async () => {
    const r = await k(['patch', 'pod/kp', '--type=json', '-p', '[{"op":"test","path":"/metadata/name","value":"other"}]']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /test/);
  });
  it('edits with an EDITOR script', async () => {
    const editor = join(dir, 'editor.sh');
    await writeFile(editor, '#!/bin/sh\nsed -i "s/busybox:2/busybox:3/" "$1"\n');
    await chmod(editor, 0o755);
    await ok(['edit', 'pod/kp'], { EDITOR: editor, KUBE_EDITOR: editor });
    assert.equal(await get('pod/kp', '.spec.containers[1].image'), 'busybox:3');
  });
  it('explains pods.spec.containers from the served schema', async () => {
    const out = await ok(['explain', 'pods.spec.containers']);
    assert.match(out, /FIELD: containers <\[\]Container>/);
    assert.match(out, /imagePullPolicy\s+<string>/);
  });
  it('validates server-side with --validate=strict, warn and ignore', async () => {
    const bad = await manifest('bad.json', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kv' }, data: { a: 'b' }, bogus: 1 });
    const strict = await k(['create', '-f', bad, '--validate=strict']);
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /strict decoding error: unknown field "bogus"/);
    const warn = await k(['create', '-f', bad, '--validate=warn', '--dry-run=server']);
    assert.equal(warn.code, 0, warn.stderr);
    assert.match(warn.stderr, /unknown field "bogus"/);
    const ignore = await k(['create', '-f', bad, '--validate=ignore']);
    assert.equal(ignore.code, 0, ignore.stderr);
    assert.doesNotMatch(ignore.stderr, /unknown field/);
  });
});
