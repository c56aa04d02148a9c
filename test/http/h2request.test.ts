// The HTTP/2 client request options carry Node's own priority defaults, so that passing them
// changes nothing on the wire: Node's `request` fills in exactly these when they are missing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { constants } from 'node:http2';
import { h2RequestOptions } from '../../lib/http/h2request.js';

describe('h2RequestOptions', () => {
  it("holds every member Node's request adds, with Node's defaults", () => {
    for (const endStream of [true, false]) {
      assert.deepEqual(h2RequestOptions(endStream), { endStream, weight: constants.NGHTTP2_DEFAULT_WEIGHT, parent: 0, exclusive: false, silent: false });
    }
  });
  it('is a new object each call (Node copies it; a caller may still change its own)', () => {
    assert.notEqual(h2RequestOptions(true), h2RequestOptions(true));
  });
});
