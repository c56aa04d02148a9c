// Label and field selectors on a webhook-converted CRD read the object as the
// requested version serves it, as kube's per-version storage does: v1's
// selectable `.spec.hostPort` exists only in v1 (stored objects are v2), labels
// the webhook sets are selected on, paging fills each page from converted
// objects, and watches turn a change of the converted object's match into
// ADDED / DELETED. Uses the HTTPS webhook of convertwebhook.ts.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { installGadgets, startConversionWebhook, type ConversionWebhook } from './convertwebhook.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const base = (v: string) => `/apis/conv.example.com/${v}/namespaces/default/gadgets`;
const v2Gadget = (name: string, host: string, port: number, labels?: Record<string, string>) => ({
  apiVersion: 'conv.example.com/v2',
  kind: 'Gadget',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { host, port },
});
const names = (l: Json) => l.items.map((i: Json) => i.metadata.name).sort();
const sel = (s: string) => encodeURIComponent(s);

describe('selectors on a webhook-converted CRD', () => {
  let s: TestServer;
  let hook: ConversionWebhook;
  before(async () => {
    hook = await startConversionWebhook();
    s = await startTestServer();
    await installGadgets(s, hook, (crd) => {
      crd.spec.versions[0].selectableFields = [{ jsonPath: '.spec.hostPort' }];
      crd.spec.versions[1].selectableFields = [{ jsonPath: '.spec.host' }];
    });
    for (const [name, host, port, labels] of [
      ['a', 'one.org', 1, { tier: 'front' }],
      ['b', 'one.org', 2, undefined],
      ['c', 'two.org', 1, { tier: 'front' }],
      ['d', 'one.org', 1, undefined],
    ] as const) {
      const c = await s.admin.request('POST', base('v2'), v2Gadget(name, host, port, labels));
      assert.equal(c.status, 201, c.text);
    }
  });
  after(async () => {
    await s.close();
    await hook.close();
  });
  beforeEach(() => {
    hook.mode = 'ok';
    hook.reviews.length = 0;
  });
  let touches = 0;
  /** New revisions, written through the storage version: states no read has converted yet (converted states are kept). */
  const touch = async (...names: string[]) => {
    for (const name of names) {
      const r = await s.admin.request(
        'PATCH',
        `${base('v2')}/${name}`,
        { metadata: { annotations: { touched: String(++touches) } } },
        {
          'content-type': 'application/merge-patch+json',
        },
      );
      assert.equal(r.status, 200, r.text);
    }
  };

  it("evaluates a version's selectable field on the object as that version serves it", async () => {
    const l = await s.admin.request('GET', `${base('v1')}?fieldSelector=${sel('spec.hostPort=one.org:1')}`);
    assert.equal(l.status, 200, l.text);
    assert.deepEqual(names(l.json), ['a', 'd']);
    assert.ok(l.json.items.every((i: Json) => i.apiVersion === 'conv.example.com/v1' && i.spec.hostPort === 'one.org:1'));
    const not = await s.admin.request('GET', `${base('v1')}?fieldSelector=${sel('spec.hostPort!=one.org:1')}`);
    assert.deepEqual(names(not.json), ['b', 'c']);
    // The storage version's own field, and v1's field refused there as kube refuses an undeclared label.
    assert.deepEqual(names((await s.admin.request('GET', `${base('v2')}?fieldSelector=${sel('spec.host=one.org')}`)).json), ['a', 'b', 'd']);
    const bad = await s.admin.request('GET', `${base('v2')}?fieldSelector=${sel('spec.hostPort=one.org:1')}`);
    assert.equal(bad.status, 400, bad.text);
    // Name and namespace with a version's field.
    const both = await s.admin.request('GET', `${base('v1')}?fieldSelector=${sel('metadata.name=d,spec.hostPort=one.org:1')}`);
    assert.deepEqual(names(both.json), ['d']);
  });

  it('selects on labels the webhook sets in the requested version', async () => {
    hook.mode = 'relabel';
    await touch('a', 'b', 'c', 'd');
    const l = await s.admin.request('GET', `${base('v1')}?labelSelector=${sel('converted=yes')}`);
    assert.equal(l.status, 200, l.text);
    assert.deepEqual(names(l.json), ['a', 'b', 'c', 'd']);
    assert.deepEqual(names((await s.admin.request('GET', `${base('v1')}?labelSelector=tier`)).json), [], 'the stored labels are not what v1 serves');
    assert.deepEqual(names((await s.admin.request('GET', `${base('v2')}?labelSelector=tier`)).json), ['a', 'c'], 'v2 is stored: no webhook');
  });

  it('fills pages from converted objects and continues after the last one returned', async () => {
    const seen: string[] = [];
    let cont = '';
    for (let i = 0; i < 5; i++) {
      const p = await s.admin.request(
        'GET',
        `${base('v1')}?limit=1&fieldSelector=${sel('spec.hostPort=one.org:1')}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      assert.equal(p.status, 200, p.text);
      assert.ok(p.json.items.length <= 1);
      seen.push(...p.json.items.map((x: Json) => x.metadata.name));
      assert.equal(p.json.metadata.remainingItemCount, undefined, 'no count with selectors');
      cont = p.json.metadata.continue ?? '';
      if (!cont) break;
    }
    assert.deepEqual(seen, ['a', 'd']);
  });

  it("answers the webhook's error when the objects to select cannot be converted", async () => {
    hook.mode = 'failure';
    await touch('a');
    const l = await s.admin.request('GET', `${base('v1')}?fieldSelector=${sel('spec.hostPort=one.org:1')}`);
    assert.equal(l.status, 500, l.text);
    assert.match(l.json.message, /cannot convert gadgets today/);
  });

  it("watches with a version's field: an object enters and leaves the selection as its converted form changes", async () => {
    const w = await s.admin.watch(`${base('v1')}?watch=true&fieldSelector=${sel('spec.hostPort=w.org:1')}`);
    assert.equal(w.status, 200);
    try {
      assert.equal((await s.admin.request('POST', base('v2'), v2Gadget('w', 'w.org', 1))).status, 201);
      assert.equal((await s.admin.request('POST', base('v2'), v2Gadget('x', 'w.org', 2))).status, 201);
      for (const port of [2, 1]) {
        const p = await s.admin.request('PATCH', `${base('v2')}/w`, { spec: { port } }, { 'content-type': 'application/merge-patch+json' });
        assert.equal(p.status, 200, p.text);
      }
      assert.equal((await s.admin.request('DELETE', `${base('v2')}/w`)).status, 200);
      const evs = await w.take(4);
      assert.deepEqual(
        evs.map((e) => [e.type, e.object.metadata.name, e.object.spec.hostPort]),
        [
          ['ADDED', 'w', 'w.org:1'],
          ['DELETED', 'w', 'w.org:1'],
          ['ADDED', 'w', 'w.org:1'],
          ['DELETED', 'w', 'w.org:1'],
        ],
      );
      assert.ok(evs.every((e) => e.object.apiVersion === 'conv.example.com/v1'));
    } finally {
      w.stop();
    }
  });

  it('lists the initial state of a watch from converted objects, and converts nothing for a name that does not match', async () => {
    const w = await s.admin.watch(`${base('v1')}?watch=true&fieldSelector=${sel('metadata.name=a,spec.hostPort=one.org:1')}`);
    assert.equal(w.status, 200);
    try {
      const [ev] = await w.take(1);
      assert.deepEqual([ev!.type, ev!.object.metadata.name, ev!.object.spec.hostPort], ['ADDED', 'a', 'one.org:1']);
      const reviews = hook.reviews.length;
      const p = await s.admin.request('PATCH', `${base('v2')}/b`, { spec: { port: 3 } }, { 'content-type': 'application/merge-patch+json' });
      assert.equal(p.status, 200, p.text);
      const q = await s.admin.request('PATCH', `${base('v2')}/a`, { spec: { port: 4 } }, { 'content-type': 'application/merge-patch+json' });
      assert.equal(q.status, 200, q.text);
      const [gone] = await w.take(1);
      assert.deepEqual([gone!.type, gone!.object.metadata.name, gone!.object.spec.hostPort], ['DELETED', 'a', 'one.org:1']);
      assert.equal(hook.reviews.length - reviews, 1, "only a's new state was converted (its old one was before), never b's");
    } finally {
      w.stop();
    }
  });

  it("deletes a collection chosen by a version's field", async () => {
    const d = await s.admin.request('DELETE', `${base('v1')}?fieldSelector=${sel('spec.hostPort=two.org:1')}`);
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(
      d.json.items.map((i: Json) => [i.apiVersion, i.metadata.name, i.spec.hostPort]),
      [['conv.example.com/v1', 'c', 'two.org:1']],
    );
    assert.deepEqual(names((await s.admin.request('GET', base('v2'))).json), ['a', 'b', 'd', 'x']);
  });
});
