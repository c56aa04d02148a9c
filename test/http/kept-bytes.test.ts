// The memory store keeps an object as its JSON list piece, and a JSON GET and a
// JSON watch's initial events are made from those bytes without the object
// (Store.getPieceNow, ListResult.pieces): they must be the bytes the object's
// own encoding gives. A ConfigMap holding characters Go escapes (<, >, &,
// U+2028) and non-ASCII text is created; its GET, its LIST item, its initial
// ADDED event and, after an update, its new GET are compared byte for byte
// with the create's and the update's answers, on the memory store and on the
// file store, there also after a restart (the pieces made from the files).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';

const NS = 'kept-bytes';
const P = `/api/v1/namespaces/${NS}/configmaps`;
let s: TestServer;

/** The first line of a watch's body, raw (the client's WatchStream parses its lines). */
function firstWatchLine(path: string): Promise<string> {
  const tls = s.admin.agent.options as { ca?: string; cert?: string; key?: string };
  return new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(path, s.admin.base), { method: 'GET', agent: false, ca: tls.ca, cert: tls.cert, key: tls.key }, (res) => {
      let got = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        got += c;
        const nl = got.indexOf('\n');
        if (nl >= 0) {
          resolve(got.slice(0, nl + 1));
          req.destroy();
        }
      });
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    req.end();
  });
}

for (const backend of ['memory', 'file'] as const) {
  describe(`kept bytes on the ${backend} store`, () => {
    let dataDir: string;
    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-kept-'));
      s = await startTestServer({ dataDir, flags: ['--storage-backend', backend] });
      const r = await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      assert.equal(r.status, 201, r.text);
    });
    after(async () => {
      await s?.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('answers GET, LIST items and initial watch events with the bytes the object encodes to', async () => {
      const created = await s.admin.request('POST', P, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'escaped', labels: { app: 'kept' } },
        data: { html: '<a href="x">&amp;</a>', sep: 'line\u2028next', text: 'café ünïcode' },
      });
      assert.equal(created.status, 201, created.text);
      assert.match(created.text, /\\u003ca href/, 'the create answers Go-escaped JSON');

      const got = await s.admin.request('GET', `${P}/escaped`);
      assert.equal(got.status, 200);
      assert.equal(got.headers['content-type'], 'application/json');
      assert.equal(Number(got.headers['content-length']), got.body.length);
      assert.ok(got.body.equals(Buffer.from(created.text, 'utf8')), `GET:\n${got.text}\ncreate:\n${created.text}`);

      const listed = await s.admin.request('GET', P);
      assert.equal(listed.status, 200);
      assert.ok(listed.text.includes(`"items":[${created.text.trimEnd()}]`), listed.text);

      const line = await firstWatchLine(`${P}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
      assert.equal(line, `{"type":"ADDED","object":${created.text.trimEnd()}}\n`);

      const pretty = await s.admin.request('GET', `${P}/escaped?pretty=true`);
      assert.equal(
        pretty.text,
        JSON.stringify(JSON.parse(created.text), null, 2)
          .replace(/</g, '\\u003c')
          .replace(/>/g, '\\u003e')
          .replace(/&/g, '\\u0026')
          .replace(/\u2028/g, '\\u2028'),
      );

      const obj = created.json as { data: Record<string, string> };
      obj.data['more'] = '<b>';
      const updated = await s.admin.request('PUT', `${P}/escaped`, obj);
      assert.equal(updated.status, 200, updated.text);
      const again = await s.admin.request('GET', `${P}/escaped`);
      assert.ok(again.body.equals(Buffer.from(updated.text, 'utf8')), `GET after update:\n${again.text}\nupdate:\n${updated.text}`);
    });

    it('answers 404 for a name the store does not hold', async () => {
      const r = await s.admin.request('GET', `${P}/absent`);
      assert.equal(r.status, 404);
      assert.equal((r.json as { message: string }).message, 'configmaps "absent" not found');
    });

    if (backend === 'file')
      it('answers the same bytes after a restart, from the pieces loaded from a log of mostly dead records', async () => {
        const before = await s.admin.request('GET', `${P}/escaped`);
        let plain = await s.admin.request('POST', P, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: { a: 'b' } });
        assert.equal(plain.status, 201, plain.text);
        // Mostly dead records: the live pieces are copied out of the log's buffer at the next open.
        for (let i = 0; i < 30; i++) {
          const o = plain.json as { data: Record<string, string> };
          o.data['a'] = `b${i}`;
          plain = await s.admin.request('PUT', `${P}/plain`, o);
          assert.equal(plain.status, 200, plain.text);
        }
        await s.close();
        s = await startTestServer({ dataDir, flags: ['--storage-backend', backend] });
        const escaped = await s.admin.request('GET', `${P}/escaped`);
        assert.ok(escaped.body.equals(before.body), `after restart:\n${escaped.text}\nbefore:\n${before.text}`);
        const again = await s.admin.request('GET', `${P}/plain`);
        assert.ok(again.body.equals(Buffer.from(plain.text, 'utf8')), `after restart:\n${again.text}\ncreate:\n${plain.text}`);
        const line = await firstWatchLine(`${P}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
        assert.equal(line, `{"type":"ADDED","object":${before.text.trimEnd()}}\n`);
      });
  });
}
