// A stored object's watch event is encoded once per encoding and event type,
// however many watchers get it: 100 watchers in each of JSON, protobuf and
// CBOR see a create and an update, and the encoders (counted through the
// watchEncoders seam) run once for each of the six events. A custom resource
// served in another version than it is stored in is shared the same way.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import type { ClientRequest } from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { CRD_PATH, waitEstablished } from '../crd/fixtures.js';
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
const calls = new Map<string, Record<string, number>>();
const counted = (name: string) => calls.get(name) ?? {};

before(async () => {
  for (const enc of Object.keys(original) as EventEncoding[]) {
    watchEncoders[enc] = (type: WireType, obj) => {
      const name = String(obj.metadata.name);
      const c = calls.get(name) ?? {};
      c[`${enc} ${type}`] = (c[`${enc} ${type}`] ?? 0) + 1;
      calls.set(name, c);
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

/** `n` watches of `path` from `rv`, each keeping the bytes it receives. */
function openWatches(path: string, rv: string, encoding: EventEncoding, n: number, agent: Agent): Watch[] {
  return Array.from({ length: n }, () => {
    const w: Watch = { encoding, body: [], req: undefined as unknown as ClientRequest };
    w.req = httpsRequest(new URL(`${path}?watch=1&resourceVersion=${rv}`, s.url), { agent, headers: { accept: ACCEPT[encoding] } }, (res) => {
      assert.equal(res.statusCode, 200);
      res.on('data', (c: Buffer) => w.body.push(c));
    });
    w.req.on('error', () => {});
    w.req.end();
    return w;
  });
}

function clientAgent(): Agent {
  const o = s.admin.agent.options;
  return new Agent({ ca: o.ca, cert: o.cert, key: o.key, maxSockets: Infinity });
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
  const agent = clientAgent();
  const watches: Watch[] = [];
  try {
    for (const encoding of Object.keys(ACCEPT) as EventEncoding[]) watches.push(...openWatches(P, rv, encoding, WATCHERS, agent));
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
    assert.deepEqual(counted(NAME), {
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

it(`encodes a custom resource's event once for ${WATCHERS} watchers of a version it is not stored in`, async () => {
  const group = 'shared.example.com';
  const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } };
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `sprockets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'sprockets', singular: 'sprocket', kind: 'Sprocket' },
      versions: [
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v2', served: true, storage: false, schema },
      ],
    },
  };
  assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
  const v1 = `/apis/${group}/v1/namespaces/shared/sprockets`;
  const v2 = `/apis/${group}/v2/namespaces/shared/sprockets`;
  await waitEstablished(s, `sprockets.${group}`, v2);
  const rv = (await s.admin.request('GET', v2)).json.metadata.resourceVersion as string;
  const agent = clientAgent();
  const watches = openWatches(v2, rv, 'json', WATCHERS, agent);
  const name = 'shared-sprocket';
  try {
    const created = await s.admin.request('POST', v1, { apiVersion: `${group}/v1`, kind: 'Sprocket', metadata: { name }, spec: { size: 1 } });
    assert.equal(created.status, 201, created.text);
    await eventually('every watcher has the event', () => watches.every((w) => occurrences(w, name) >= 1), { timeoutMs: 20_000, intervalMs: 50 });
    for (const w of watches) {
      const event = JSON.parse(Buffer.concat(w.body).toString('utf8'));
      assert.equal(event.type, 'ADDED');
      assert.equal(event.object.apiVersion, `${group}/v2`);
      assert.deepEqual(event.object.spec, { size: 1 });
    }
    assert.deepEqual(counted(name), { 'json ADDED': 1 });
  } finally {
    for (const w of watches) w.req.destroy();
    agent.destroy();
  }
});
