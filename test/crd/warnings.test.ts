// The warnings kube's custom resource strategy adds: a finalizer a write adds
// without a domain-qualified name (WarningsOnCreate / WarningsOnUpdate), once
// per added name; built-in types give none.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from './fixtures.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';
const warn = (f: string) =>
  `299 - ${JSON.stringify(`metadata.finalizers: ${JSON.stringify(f)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`)}`;
const warnings = (r: { headers: Record<string, unknown> }) => {
  const h = r.headers['warning'];
  return h === undefined ? [] : String(h).split(/, (?=299 )/);
};

describe('custom resource warnings', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.admin.request('POST', CRD_PATH, crontabCrd())).status, 201);
    await waitEstablished(s, 'crontabs.stable.example.com', CT);
  });
  after(async () => {
    await s.close();
  });

  it('warns on each finalizer a create or an update adds without a domain', async () => {
    const c = await s.admin.request('POST', CT, { ...crontab('f', {}), metadata: { name: 'f', finalizers: ['zeta', 'example.com/ok', 'alpha'] } });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(warnings(c), [warn('alpha'), warn('zeta')]);
    const cur = c.json as Json;
    const u = await s.admin.request('PUT', `${CT}/f`, { ...cur, metadata: { ...cur.metadata, finalizers: [...cur.metadata.finalizers, 'beta'] } });
    assert.equal(u.status, 200, u.text);
    assert.deepEqual(warnings(u), [warn('beta')], 'names already there are not warned again');
    const p = await s.admin.request('PATCH', `${CT}/f`, { metadata: { finalizers: ['example.com/ok'] } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(p.status, 200, p.text);
    assert.deepEqual(warnings(p), []);
    const a = await s.admin.request(
      'PATCH',
      `${CT}/f?fieldManager=t`,
      JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'f', finalizers: ['gamma'] } }),
      { 'content-type': 'application/apply-patch+yaml' },
    );
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(warnings(a), [warn('gamma')]);
  });

  it('gives built-in types none', async () => {
    const c = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', finalizers: ['plain'] },
    });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(warnings(c), []);
  });
});
