// Hostile bodies and parameters against a started gateway: each gets a 4xx Status, nothing is stored, and the
// process keeps answering /livez meanwhile.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe('parser attacks', () => {
  let gh: Gatehouse;
  before(async () => {
    gh = await startGatehouse();
  });
  after(stopAll);

  /** Sends a raw body; checks a 4xx Status came back and /livez still answers. */
  async function refused(method: string, path: string, body: string, contentType: string): Promise<{ status: number; message: string }> {
    const [r, live] = await Promise.all([
      gh.admin.request(method, path, Buffer.from(body), { 'content-type': contentType }),
      gh.admin.request('GET', '/livez'),
    ]);
    assert.ok(r.status >= 400 && r.status < 500, `${r.status} ${r.text.slice(0, 300)}`);
    assert.equal(r.json?.kind, 'Status', r.text.slice(0, 300));
    assert.equal(live.status, 200);
    return { status: r.status, message: String(r.json.message) };
  }

  it('refuses a YAML billion-laughs body (CVE-2019-11253)', async () => {
    const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: laughs}', 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i <= 9; i++)
      lines.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    await refused('POST', CM, lines.join('\n'), 'application/yaml');
    assert.equal((await gh.admin.request('GET', `${CM}/laughs`)).status, 404);
  });

  it('refuses JSON nested 100,000 deep', async () => {
    const deep = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    await refused('POST', CM, deep, 'application/json');
    assert.equal((await gh.admin.request('GET', `${CM}/deep`)).status, 404);
  });

  it('answers 200,000 duplicate keys (under the body limit) with one warning, or one 400 cause under Strict', async () => {
    const body = (name: string) =>
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{${Array.from({ length: 200_000 }, (_, i) => `"k":"${i}"`).join(',')}}}`;
    const strict = await refused('POST', `${CM}?fieldValidation=Strict`, body('dups-strict'), 'application/json');
    assert.equal(strict.status, 400);
    assert.equal(strict.message.match(/duplicate field/g)?.length, 1, strict.message.slice(0, 300));
    assert.equal((await gh.admin.request('GET', `${CM}/dups-strict`)).status, 404);
    // Warn (the default), as kube-apiserver: stored with the last value, and the warning sent once.
    const warn = await gh.admin.request('POST', CM, Buffer.from(body('dups')), { 'content-type': 'application/json' });
    assert.equal(warn.status, 201, warn.text.slice(0, 300));
    assert.deepEqual(warn.json.data, { k: '199999' });
    assert.equal(warn.headers.warning, '299 - "duplicate field \\"data.k\\""');
  });

  it('refuses a million duplicate keys (past the body limit) with a 413 the client receives', async () => {
    const dup = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dups-m"},"data":{${Array.from({ length: 1_000_000 }, () => '"k":"v"').join(',')}}}`;
    const r = await refused('POST', CM, dup, 'application/json');
    assert.equal(r.status, 413);
    assert.equal((await gh.admin.request('GET', `${CM}/dups-m`)).status, 404);
  });

  it('refuses a JSON patch whose copy operations double a value past the limit', async () => {
    const made = await gh.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'grow' }, data: { a: 'x'.repeat(64 * 1024) } });
    assert.equal(made.status, 201, made.text);
    const ops = [
      { op: 'add', path: '/metadata/annotations', value: { g: [] } },
      { op: 'add', path: '/metadata/annotations/g/-', value: 'y'.repeat(1024) },
    ];
    for (let i = 0; i < 40; i++) ops.push({ op: 'copy', from: '/metadata/annotations/g', path: `/metadata/annotations/g${i}` } as never);
    // Each copy also doubles what the next copies: the last ones reference the ever-growing array.
    for (let i = 0; i < 30; i++) ops.push({ op: 'copy', from: `/metadata/annotations`, path: `/metadata/annotations/g/-` } as never);
    const r = await refused('PATCH', `${CM}/grow`, JSON.stringify(ops), 'application/json-patch+json');
    assert.ok([413, 422, 400].includes(r.status), String(r.status));
    const after = await gh.admin.request('GET', `${CM}/grow`);
    assert.equal(after.json.metadata.annotations, undefined);
  });

  it('refuses 64 KiB adversarial strings in selectors, names and media-type parameters', async () => {
    const long = 'a'.repeat(64 * 1024);
    const sel = await gh.admin.request('GET', `${CM}?labelSelector=${encodeURIComponent(`${long}!=,(((${long}`)}`);
    assert.equal(sel.status, 400, sel.text.slice(0, 200));
    const fsel = await gh.admin.request('GET', `${CM}?fieldSelector=${encodeURIComponent(`metadata.name=${'\\'.repeat(30_000)}`)}`);
    assert.ok(fsel.status === 400 || fsel.status === 200, fsel.text.slice(0, 200));
    const name = await gh.admin.request('GET', `${CM}/${long}`);
    assert.ok(name.status === 404 || name.status === 400, String(name.status));
    const media = await gh.admin.request('GET', CM, undefined, { accept: `application/json;${'q=0.5;'.repeat(8000)}x="${'\\"'.repeat(4000)}` });
    assert.ok(media.status < 500, String(media.status));
    assert.equal((await gh.admin.request('GET', '/livez')).status, 200);
  });
});
