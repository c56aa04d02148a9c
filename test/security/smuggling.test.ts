// HTTP/1.1 framing attacks against a started gateway: each is refused on its connection, never read as two requests,
// and a legitimate request right after is served.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { rawExchange, type RawTarget } from '../helpers/raw.js';

const CM = '/api/v1/namespaces/default/configmaps';
/** A second request hidden in the body of the first: it must never be served. */
const SMUGGLED = `GET ${CM}/smuggled HTTP/1.1\r\nHost: x\r\n\r\n`;

describe('HTTP framing attacks', () => {
  let gh: Gatehouse;
  let admin: RawTarget;

  before(async () => {
    gh = await startGatehouse();
    const pki = `${gh.dataDir}/pki`;
    admin = {
      port: gh.port,
      ca: readFileSync(`${pki}/ca.crt`, 'utf8'),
      cert: readFileSync(`${pki}/admin.crt`, 'utf8'),
      key: readFileSync(`${pki}/admin.key`, 'utf8'),
    };
  });
  after(stopAll);

  /** The answers' status lines, in order. */
  const statuses = (text: string) => [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));

  const cases: [string, string][] = [
    [
      'Content-Length with Transfer-Encoding',
      `POST ${CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
    ],
    [
      'two different Content-Lengths',
      `POST ${CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: ${2 + SMUGGLED.length}\r\n\r\n{}${SMUGGLED}`,
    ],
    ['an obs-folded header', `GET ${CM} HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n`],
    ['a chunked encoding that is not last', `POST ${CM} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${SMUGGLED}`],
    ['a space before the colon', `GET ${CM} HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n`],
  ];
  for (const [name, bytes] of cases) {
    it(`refuses ${name} with 400 and closes the connection`, async () => {
      const r = await rawExchange(admin, bytes, { waitMs: 5000 });
      assert.deepEqual(statuses(r.text), [400], r.text);
      assert.equal(r.closed, true, 'the connection is closed');
      assert.doesNotMatch(r.text, /smuggled/);
    });
  }

  it('refuses an absolute-form request target with 400', async () => {
    const r = await rawExchange(admin, `GET https://127.0.0.1:${gh.port}${CM} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, { waitMs: 5000 });
    assert.deepEqual(statuses(r.text), [400], r.text);
  });

  it('refuses CONNECT and TRACE', async () => {
    const connect = await rawExchange(admin, `CONNECT 127.0.0.1:6379 HTTP/1.1\r\nHost: 127.0.0.1:6379\r\n\r\n`, { waitMs: 5000 });
    assert.ok(
      statuses(connect.text).every((s) => s >= 400),
      connect.text,
    );
    assert.equal(connect.closed, true);
    const trace = await rawExchange(admin, `TRACE ${CM} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, { waitMs: 5000 });
    const [code] = statuses(trace.text);
    assert.ok(code === 405 || code === 400, trace.text);
    assert.doesNotMatch(trace.text, /admin\.crt|Authorization/i);
  });

  it('still serves a legitimate request, and the process is up', async () => {
    const r = await gh.admin.request('GET', CM);
    assert.equal(r.status, 200, r.text);
    assert.equal((await gh.admin.request('GET', '/livez')).status, 200);
    assert.equal(gh.proc.running, true);
  });
});
