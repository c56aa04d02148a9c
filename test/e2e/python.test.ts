// The official Python client (python3-kubernetes) against a started Gatehouse:
// list, create, and watch.Watch().stream(...) with resume (it sends
// `watch=True`, which Gatehouse used to answer with a list); and its workload
// calls: create_from_yaml on a Deployment, Service and ReplicationController,
// a kind: List, a scale patch, and the conflict string it builds from kube's
// body, compared byte for byte. Scripts in ./python/.
// Skipped when no python3 on this machine can import kubernetes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

function findPython(): string | undefined {
  for (const py of ['python3', '/usr/bin/python3']) {
    try {
      execFileSync(py, ['-c', 'import kubernetes'], { stdio: 'ignore' });
      return py;
    } catch {
      /* next */
    }
  }
  return undefined;
}

const python = findPython();

describe('the Python client', { skip: python ? false : 'no python3 with the kubernetes package (apt-get install python3-kubernetes)', timeout: 60_000 }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'py' } })).status, 201);
    assert.equal(
      (await s.admin.request('POST', '/api/v1/namespaces/py/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' } })).status,
      201,
    );
  });
  after(async () => {
    await s?.close();
  });

  it('lists, creates, watches and resumes a watch', async () => {
    const script = fileURLToPath(new URL('./python/watch.py', import.meta.url));
    const { stdout } = await run(python!, [script, s.kubeconfig, 'py'], { timeout: 45_000 });
    const seen = JSON.parse(stdout) as { listed: string[]; first: [string, string, unknown][]; resumed: [string, string][] };
    assert.ok(seen.listed.includes('before'), JSON.stringify(seen.listed));
    assert.deepEqual(seen.first, [['ADDED', 'py1', { a: '1' }]]);
    assert.deepEqual(seen.resumed, [['ADDED', 'py2']]);
  });

  it("creates workloads from YAML, scales one, and raises the conflict string kube's body makes", async () => {
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pyapps' } })).status, 201);
    const script = fileURLToPath(new URL('./python/workloads.py', import.meta.url));
    const { stdout } = await run(python!, [script, s.kubeconfig, 'pyapps'], { timeout: 45_000 });
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    // kube's SetDefaults for a Deployment and a container from a tagged image.
    assert.deepEqual(seen.deployment, {
      replicas: 3,
      image: 'nginx:1.27.3',
      port: 80,
      strategy: 'RollingUpdate',
      revisionHistoryLimit: 10,
      imagePullPolicy: 'IfNotPresent',
      generation: 1,
    });
    assert.deepEqual(seen.rc, { replicas: 2, imagePullPolicy: 'Always' });
    assert.deepEqual(seen.serviceStatus, { loadBalancer: {} });
    assert.equal(seen.serviceEndsWithNewline, true);
    assert.deepEqual(seen.listed, { replicas: 1, service: 8080 });
    assert.deepEqual(seen.scaled, [5, 5]);
    // The client joins each failed create's reason and body; kube's bodies end
    // with its encoder's newline and a core kind's details carry no group.
    const conflict = (resource: string, name: string, group?: string) =>
      `Error from server (Conflict): {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"${group ? `${resource}.${group}` : resource} \\"${name}\\" already exists","reason":"AlreadyExists","details":{"name":"${name}",${group ? `"group":"${group}",` : ''}"kind":"${resource}"},"code":409}\n`;
    assert.equal(seen.conflict, conflict('deployments', 'web', 'apps') + conflict('services', 'web') + conflict('replicationcontrollers', 'legacy'));
    assert.deepEqual(seen.afterDelete, ['listed']);
  });
});
