// A stored object's watch event is encoded once per encoding and event type,
// however many watchers get it: 100 watchers in each of JSON, protobuf and
// CBOR see a create and an update, and the encoders (counted through the
// watchEncoders seam) run once for each of the six events.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import type { ClientRequest } from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { watchEncoders, type EventEncoding, type WireType } from '../../backends/core/watchevents.js';

const WATCHERS = 100;
const NAME = 'shared-event-target';
const P = '/api/v1/namespaces/shared/configmaps';
const ACCEPT: Record<EventEncoding, string> = {
  json: 'application/json',
  protobuf: 'application/vnd.kubernetes.protobuf',
  cbor: 'application/cbor',
};

let s: TestServer;
const original = { ...watchEncoders };
const calls: Record<string, number> = {};

before(async () => {
  for (const enc of Object.keys(original) as EventEncoding[]) {
    watchEncoders[enc] = (type: WireType, obj) => {
      if (obj.metadata.name === NAME) calls[`${enc} ${type}`] = (calls[`${enc} ${type}`] ?? 0) + 1;
      return original[enc](type, obj);
    };
  }
  s = await startTestServer({ flags: ['--feature-gates=CBORServingAndStorage=true'] });
  const r = await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shared' } });
  assert.equal(r.status, 201, r.text);
});
after(async () => {
  Object.assign(watchEncoders, original);
  await s.close();
});

interface Watch {
  encoding: EventEncoding;
  body: Buffer[];
  req: ClientRequest;
}

/** How many times `needle` occurs in the bytes received so far. */
function occurrences(w: Watch, needle: string): number {
  const all = Buffer.concat(w.body);
  let n = 0;
  for (let i = all.indexOf(needle); i !== -1; i = all.indexOf(needle, i + 1)) n++;
  return n;
}

it(`encodes each event once per encoding across ${WATCHERS} watchers of each`, async () => {
  const rv = (await s.admin.request('GET', P)).json.metadata.resourceVersion as string;
  const o = s.admin.agent.options;
  const agent = new Agent({ ca: o.ca, cert: o.cert, key: o.key, maxSockets: Infinity });
  const watches: Watch[] = [];
  try {
    for (const encoding of Object.keys(ACCEPT) as EventEncoding[]) {
      for (let i = 0; i < WATCHERS; i++) {
        const w: Watch = { encoding, body: [], req: undefined as unknown as ClientRequest };
        w.req = httpsRequest(new URL(`${P}?watch=1&resourceVersion=${rv}`, s.url), { agent, headers: { accept: ACCEPT[encoding] } }, (res) => {
          assert.equal(res.statusCode, 200);
          res.on('data', (c: Buffer) => w.body.push(c));
        });
        w.req.on('error', () => {});
        w.req.end();
        watches.push(w);
      }
    }
    const created = await s.admin.request('POST', P, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: NAME }, data: { a: '1' } });
    assert.equal(created.status, 201, created.text);
    const updated = await s.admin.request('PUT', `${P}/${NAME}`, { ...created.json, data: { a: '2' } });
    assert.equal(updated.status, 200, updated.text);
    // The object's name is in every encoding's bytes once per event.
    await eventually('every watcher has both events', () => watches.every((w) => occurrences(w, NAME) >= 2), { timeoutMs: 20_000, intervalMs: 50 });

    for (const encoding of Object.keys(ACCEPT) as EventEncoding[]) {
      const mine = watches.filter((w) => w.encoding === encoding).map((w) => Buffer.concat(w.body));
      assert.ok(
        mine.every((b) => b.equals(mine[0]!)),
        `every ${encoding} watcher got the same bytes`,
      );
    }
    assert.deepEqual(calls, {
      'json ADDED': 1,
      'json MODIFIED': 1,
      'protobuf ADDED': 1,
      'protobuf MODIFIED': 1,
      'cbor ADDED': 1,
      'cbor MODIFIED': 1,
    });
  } finally {
    for (const w of watches) w.req.destroy();
    agent.destroy();
  }
});
