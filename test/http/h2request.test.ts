// The HTTP/2 client request options: on Node 20 they carry Node's own priority defaults, so that
// passing them changes nothing on the wire (Node's `request` fills in exactly these when they are
// missing); from Node 22, which deprecates priority signalling (DEP0194), only endStream, so a
// request warns of nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, constants, createServer } from 'node:http2';
import { h2RequestOptions } from '../../lib/http/h2request.js';

const major = Number(process.versions.node.split('.')[0]);

describe('h2RequestOptions', () => {
  it("holds Node's defaults where Node adds them, and nothing it would warn of", () => {
    for (const endStream of [true, false]) {
      const want = major < 22 ? { endStream, weight: constants.NGHTTP2_DEFAULT_WEIGHT, parent: 0, exclusive: false, silent: false } : { endStream };
      assert.deepEqual(h2RequestOptions(endStream), want);
    }
  });
  it('is a new object each call (Node copies it; a caller may still change its own)', () => {
    assert.notEqual(h2RequestOptions(true), h2RequestOptions(true));
  });
  it('makes a request with no deprecation warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const session = connect(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const st = session.request({ ':path': '/' }, h2RequestOptions(true));
        let text = '';
        st.setEncoding('utf8');
        st.on('data', (d: string) => (text += d));
        st.on('end', () => resolve(text));
        st.on('error', reject);
      });
      assert.equal(body, 'ok');
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(
        warnings.filter((w) => w.name === 'DeprecationWarning').map((w) => w.message),
        [],
      );
    } finally {
      process.off('warning', onWarning);
      session.close();
      server.close();
    }
  });
});
