// kubectl apply --server-side against the server: create then update, a
// second manager conflicting, --force-conflicts, the client-side → server-side
// migration, and get --show-managed-fields.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
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
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-kubectl-apply-'));
});
after(async () => {
  await s?.close();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function k(args: string[]): Promise<Run> {
  return new Promise((resolve) =>
    execFile(kubectl!, ['--kubeconfig', s.kubeconfig, '-n', 'default', ...args], { encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
}
async function ok(args: string[]): Promise<string> {
  const r = await k(args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
async function manifest(name: string, data: Record<string, string>, cmName = 'kc'): Promise<string> {
  const path = join(dir, `${name}.yaml`);
  await writeFile(
    path,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${cmName}\ndata:\n${Object.entries(data)
      .map(([a, b]) => `  ${a}: "${b}"`)
      .join('\n')}\n`,
  );
  return path;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function getJson(name: string): Promise<any> {
  return JSON.parse(await ok(['get', 'configmap', name, '-o', 'json', '--show-managed-fields']));
}

describe('kubectl apply --server-side', { skip: kubectl ? false : 'kubectl not found' }, () => {
  it('creates and then updates an object', async () => {
    assert.match(await ok(['apply', '--server-side', '-f', await manifest('a1', { a: '1' })]), /serverside-applied/);
    assert.match(await ok(['apply', '--server-side', '-f', await manifest('a2', { a: '2', b: '1' })]), /serverside-applied/);
    const o = await getJson('kc');
    assert.deepEqual(o.data, { a: '2', b: '1' });
    assert.deepEqual(
      o.metadata.managedFields.map((e: { manager: string; operation: string }) => `${e.manager}/${e.operation}`),
      ['kubectl/Apply'],
    );
  });
  it('reports a conflict with a second field manager and lets --force-conflicts take over', async () => {
    const r = await k(['apply', '--server-side', '--field-manager=other', '-f', await manifest('a3', { a: 'mine' })]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.data\.a/);
    await ok(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', await manifest('a3', { a: 'mine' })]);
    const o = await getJson('kc');
    assert.equal(o.data.a, 'mine');
    const other = o.metadata.managedFields.find((e: { manager: string }) => e.manager === 'other');
    assert.deepEqual(other.fieldsV1, { 'f:data': { 'f:a': {} } });
  });
  it('removes a key kubectl dropped from its intent', async () => {
    await ok(['apply', '--server-side', '-f', await manifest('a4', { a: 'mine' })]); // a is shared now; b dropped
    const o = await getJson('kc');
    assert.deepEqual(o.data, { a: 'mine' });
  });
  it('shows managed fields in kubectl get -o yaml --show-managed-fields and hides them by default', async () => {
    const y = await ok(['get', 'configmap', 'kc', '-o', 'yaml', '--show-managed-fields']);
    assert.match(y, /managedFields:/);
    assert.match(y, /fieldsType: FieldsV1/);
    assert.match(y, /manager: other/);
    assert.match(y, /operation: Apply/);
    assert.doesNotMatch(await ok(['get', 'configmap', 'kc', '-o', 'yaml']), /managedFields/);
  });
  it('migrates an object from client-side apply to server-side apply', async () => {
    assert.match(await ok(['apply', '-f', await manifest('m1', { a: '1', b: '1' }, 'mig')]), /created/);
    let o = await getJson('mig');
    assert.deepEqual(
      o.metadata.managedFields.map((e: { manager: string }) => e.manager),
      ['kubectl-client-side-apply'],
    );
    // A changed value conflicts with kubectl-client-side-apply, but the last-applied annotation excuses it for the manager "kubectl".
    const r = await k(['apply', '--server-side', '-f', await manifest('m2', { a: '2' }, 'mig')]);
    assert.equal(r.code, 0, r.stderr);
    o = await getJson('mig');
    assert.equal(o.data.a, '2');
    assert.equal(o.data.b, undefined, 'b left the intent and kubectl took it over from client-side apply');
    const kubectlEntry = o.metadata.managedFields.find((e: { manager: string; operation: string }) => e.manager === 'kubectl' && e.operation === 'Apply');
    assert.ok(kubectlEntry, JSON.stringify(o.metadata.managedFields));
    assert.equal(
      o.metadata.managedFields.some((e: { manager: string }) => e.manager === 'kubectl-client-side-apply'),
      false,
      JSON.stringify(o.metadata.managedFields),
    );
    assert.match(o.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], /"a":"2"/);
  });
});
