// The official Python client (python3-kubernetes) against a started Gatehouse:
// list, create, and watch.Watch().stream(...) with resume. It sends
// `watch=True`, which Gatehouse used to answer with a list.
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
    const script = fileURLToPath(new URL('./python-client.py', import.meta.url));
    const { stdout } = await run(python!, [script, s.kubeconfig, 'py'], { timeout: 45_000 });
    const seen = JSON.parse(stdout) as { listed: string[]; first: [string, string, unknown][]; resumed: [string, string][] };
    assert.ok(seen.listed.includes('before'), JSON.stringify(seen.listed));
    assert.deepEqual(seen.first, [['ADDED', 'py1', { a: '1' }]]);
    assert.deepEqual(seen.resumed, [['ADDED', 'py2']]);
  });
});
