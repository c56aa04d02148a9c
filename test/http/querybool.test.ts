// Boolean query parameters read as kube-apiserver reads them: false only for
// "0" and "false" in any case, true for anything else (the Python client
// sends `watch=True`). Unit cases for the parser, then the verbs that use it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { queryBool } from '../../lib/api/querybool.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('queryBool', () => {
  it('is false only for 0 and false in any case, true otherwise, undefined when absent', () => {
    const at = (v: string) => queryBool(new URLSearchParams([['b', v]]), 'b');
    for (const v of ['0', 'false', 'FALSE', 'False', 'fAlSe', 'falſe']) assert.equal(at(v), false, v);
    for (const v of ['1', 'true', 'True', 'TRUE', 'yes', 'no', 'f', 'off', '', ' false', '00']) assert.equal(at(v), true, v);
    assert.equal(queryBool(new URLSearchParams(), 'b'), undefined);
    assert.equal(queryBool(new URLSearchParams('b=0&b=1'), 'b'), false, 'the first value decides');
  });
});

describe('boolean query parameters over HTTPS', () => {
  let s: TestServer;
  const P = '/api/v1/namespaces/qb/configmaps';
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'qb' } })).status, 201);
    assert.equal((await s.admin.request('POST', P, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } })).status, 201);
  });
  after(async () => {
    await s.close();
  });

  for (const v of ['True', 'yes', 'TRUE', '']) {
    it(`watch=${v} watches`, async () => {
      const w = await s.admin.watch(`${P}?watch=${v}`);
      try {
        assert.equal(w.status, 200);
        const ev = await w.next();
        assert.equal(ev?.type, 'ADDED');
        assert.equal(ev?.object.metadata.name, 'a');
      } finally {
        w.stop();
      }
    });
  }

  for (const v of ['0', 'FALSE', 'False']) {
    it(`watch=${v} lists`, async () => {
      const r = await s.admin.request('GET', `${P}?watch=${v}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.kind, 'ConfigMapList');
    });
  }

  it('allowWatchBookmarks and sendInitialEvents take True', async () => {
    const w = await s.admin.watch(`${P}?watch=True&sendInitialEvents=True&allowWatchBookmarks=yes&resourceVersionMatch=NotOlderThan`);
    try {
      const evs = await w.take(2);
      assert.deepEqual(
        evs.map((e) => e.type),
        ['ADDED', 'BOOKMARK'],
      );
      assert.equal(evs[1]!.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
    } finally {
      w.stop();
    }
  });

  it('pretty=True indents and pretty=FALSE does not', async () => {
    assert.match((await s.admin.request('GET', `${P}/a?pretty=True`)).text, /\n {2}"kind"/);
    assert.doesNotMatch((await s.admin.request('GET', `${P}/a?pretty=FALSE`, undefined, { 'user-agent': 'curl/8' })).text, /\n./);
  });

  it('orphanDependents=yes on a delete orphans (no 422)', async () => {
    assert.equal((await s.admin.request('POST', P, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd' } })).status, 201);
    const r = await s.admin.request('DELETE', `${P}/d?orphanDependents=yes`);
    assert.equal(r.status, 200, r.text);
  });

  it('force=yes on an apply forces (no 422)', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' }, data: { k: 'v' } });
    const r = await s.admin.request('PATCH', `${P}/f?fieldManager=m&force=yes`, body, { 'content-type': 'application/apply-patch+yaml' });
    assert.equal(r.status, 201, r.text);
  });
});
