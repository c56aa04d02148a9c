// PATCH over HTTP: the three patch types on objects and status, dry-run,
// preconditions, and bad input — each a clear 4xx with nothing written.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
});
after(async () => {
  await s.close();
});

const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONP = { 'content-type': 'application/json-patch+json' };
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };

async function makePod(name: string) {
  const r = await s.admin.request('POST', `${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { a: '1' } },
    spec: {
      containers: [
        { name: 'a', image: 'x' },
        { name: 'b', image: 'y' },
      ],
    },
  });
  assert.equal(r.status, 201, r.text);
  return r.json as { metadata: { resourceVersion: string; uid: string } };
}
async function rvOf(path: string): Promise<string> {
  return (await s.admin.request('GET', path)).json.metadata.resourceVersion as string;
}

describe('PATCH', () => {
  it('applies a merge patch to labels', async () => {
    await makePod('m1');
    const r = await s.admin.request('PATCH', `${NS}/pods/m1`, { metadata: { labels: { b: '2', a: null } } }, MERGE);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.metadata.labels, { b: '2' });
  });
  it('applies a JSON patch with a passing test', async () => {
    await makePod('j1');
    const r = await s.admin.request(
      'PATCH',
      `${NS}/pods/j1`,
      [
        { op: 'test', path: '/metadata/labels/a', value: '1' },
        { op: 'add', path: '/metadata/labels/c', value: '3' },
      ],
      JSONP,
    );
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.metadata.labels.c, '3');
  });
  it('answers 422 for a failed test and writes nothing', async () => {
    await makePod('j2');
    const before = await rvOf(`${NS}/pods/j2`);
    const r = await s.admin.request(
      'PATCH',
      `${NS}/pods/j2`,
      [
        { op: 'test', path: '/metadata/labels/a', value: 'nope' },
        { op: 'add', path: '/metadata/labels/c', value: '3' },
      ],
      JSONP,
    );
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(await rvOf(`${NS}/pods/j2`), before);
  });
  it('merges containers by name with a strategic merge patch', async () => {
    await makePod('s1');
    const r = await s.admin.request('PATCH', `${NS}/pods/s1`, { spec: { containers: [{ name: 'b', image: 'z' }] } }, SMP);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.json.spec.containers.map((c: { image: string }) => c.image),
      ['x', 'z'],
    );
  });
  it('patches status through the status subresource and ignores spec there', async () => {
    await makePod('st1');
    const r = await s.admin.request('PATCH', `${NS}/pods/st1/status`, { status: { phase: 'Running' }, spec: { nodeName: 'n1' } }, MERGE);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status.phase, 'Running');
    assert.equal(r.json.spec.nodeName, undefined);
  });
  it('writes nothing with dryRun=All but answers the would-be object', async () => {
    await makePod('d1');
    const before = await rvOf(`${NS}/pods/d1`);
    const r = await s.admin.request('PATCH', `${NS}/pods/d1?dryRun=All`, { metadata: { labels: { dry: 'yes' } } }, MERGE);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.metadata.labels.dry, 'yes');
    const now = await s.admin.request('GET', `${NS}/pods/d1`);
    assert.equal(now.json.metadata.resourceVersion, before);
    assert.equal(now.json.metadata.labels.dry, undefined);
  });
  it('answers 422 for a dryRun value other than All', async () => {
    await makePod('d2');
    const r = await s.admin.request('PATCH', `${NS}/pods/d2?dryRun=Some`, { metadata: { labels: { x: 'y' } } }, MERGE);
    assert.equal(r.status, 422, r.text);
  });
  it('answers 409 when the patch names a stale resourceVersion', async () => {
    await makePod('c1');
    const r = await s.admin.request('PATCH', `${NS}/pods/c1`, { metadata: { resourceVersion: '1', labels: { x: 'y' } } }, MERGE);
    assert.equal(r.status, 409, r.text);
  });
  it('accepts the current resourceVersion as a precondition', async () => {
    const p = await makePod('c2');
    const r = await s.admin.request('PATCH', `${NS}/pods/c2`, { metadata: { resourceVersion: p.metadata.resourceVersion, labels: { x: 'y' } } }, MERGE);
    assert.equal(r.status, 200, r.text);
  });
  it('answers 404 for a missing object', async () => {
    const r = await s.admin.request('PATCH', `${NS}/pods/nope`, { metadata: { labels: { x: 'y' } } }, MERGE);
    assert.equal(r.status, 404, r.text);
  });
  it('serves server-side apply (test/apply covers it): an apply body without apiVersion is a 400 naming it', async () => {
    await makePod('a1');
    const r = await s.admin.request('PATCH', `${NS}/pods/a1?fieldManager=me`, 'metadata: {}', { 'content-type': 'application/apply-patch+yaml' });
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.message, /apiVersion must be set/);
  });
  it('refuses an unknown patch content type with 415', async () => {
    await makePod('u1');
    const r = await s.admin.request('PATCH', `${NS}/pods/u1`, '{}', { 'content-type': 'application/json' });
    assert.equal(r.status, 415, r.text);
  });
  it('warns about unknown fields in a patch and drops them', async () => {
    await makePod('w1');
    const r = await s.admin.request('PATCH', `${NS}/pods/w1`, { spec: { bogus: 1 } }, MERGE);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['warning'], '299 - "unknown field \\"spec.bogus\\""');
    assert.equal(r.json.spec.bogus, undefined);
  });
  it('refuses unknown and duplicate fields with fieldValidation=Strict', async () => {
    await makePod('w2');
    const r = await s.admin.request('PATCH', `${NS}/pods/w2?fieldValidation=Strict`, '{"spec":{"bogus":1},"metadata":{"labels":{"q":"1","q":"2"}}}', MERGE);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.message, 'strict decoding error: unknown field "spec.bogus", duplicate field "metadata.labels.q"');
  });
});

describe('PATCH bad input', () => {
  const cases: Array<[string, string | unknown, Record<string, string>, number, string?]> = [
    ['a body that is not JSON', '{"metadata":', MERGE, 400],
    ['a JSON patch that is not a list', { op: 'add' }, JSONP, 400],
    ['a change of metadata.name', { metadata: { name: 'other' } }, MERGE, 400],
    ['a change of metadata.namespace', { metadata: { namespace: 'kube-system' } }, MERGE, 400],
    ['a change of metadata.uid', { metadata: { uid: 'abc' } }, MERGE, 409],
    ['a missing path', [{ op: 'replace', path: '/spec/nothing/here', value: 1 }], JSONP, 422],
    ['a wrong field type', { spec: { containers: 'no' } }, SMP, 422],
    ['a change of kind', { kind: 'Service' }, MERGE, 400],
    ['a body nested 100 levels deep', '{"a":'.repeat(100) + '1' + '}'.repeat(100), MERGE, 400],
    ['a fieldValidation value that does not exist', { metadata: { labels: { x: 'y' } } }, MERGE, 400, '?fieldValidation=Loose'],
    ['force on a non-apply patch', { metadata: { labels: { x: 'y' } } }, MERGE, 422, '?force=true&fieldManager=x'],
    [
      'a copy loop that grows a list without bound',
      [
        { op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(60000) } },
        ...Array.from({ length: 80 }, (_, i) => ({ op: 'copy', from: '/metadata/annotations/a', path: `/metadata/annotations/a${i}` })),
      ],
      JSONP,
      413,
    ],
  ];
  for (const [what, body, headers, code, query] of cases) {
    it(`answers ${code} for ${what} and writes nothing`, async () => {
      const name = `bad-${what
        .replace(/[^a-z0-9]+/g, '-')
        .slice(0, 40)
        .replace(/-$/, '')}`;
      await makePod(name);
      const before = await rvOf(`${NS}/pods/${name}`);
      const r = await s.admin.request('PATCH', `${NS}/pods/${name}${query ?? ''}`, body, headers);
      assert.equal(r.status, code, r.text);
      assert.equal(r.json.kind, 'Status');
      assert.equal(await rvOf(`${NS}/pods/${name}`), before);
    });
  }
});
