// Keys that name Object.prototype's members are data. Every write
// path (create, update, each patch type, apply, dry-run, the status
// subresource, protobuf and YAML bodies) on every store, with `__proto__`,
// `constructor` and `prototype` at every depth: valid keys round-trip as
// ordinary keys, invalid ones get kube's 4xx naming the field, and nothing
// changes the process — checked in-process (the server runs in this process,
// without the production hardening, so the code itself is under test) and
// through a fresh object's JSON and managedFields.
//
// Bodies are written as JSON text: in a JS object literal `__proto__: v` sets
// the prototype instead of making a key (expected values use computed keys).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { Reply } from '../helpers/client.js';
import { encodeEnvelope } from '../../lib/protobuf/codec.js';
import { dropPrefix, REDIS_URL, uniquePrefix } from '../store/fixtures/redis-env.js';

const NS = '/api/v1/namespaces/default';
const CM = `${NS}/configmaps`;
const JSON_CT = { 'content-type': 'application/json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };
const JSONP = { 'content-type': 'application/json-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

/** Keys valid in a ConfigMap's data that a plain object inherits or treats specially. */
const KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
const POLLUTION = '{"polluted":"yes"}';

const snapshot = () => ({
  object: Reflect.ownKeys(Object.prototype).map(String).sort(),
  objectCtor: Reflect.ownKeys(Object).map(String).sort(),
  array: Reflect.ownKeys(Array.prototype).map(String).sort(),
  fn: Reflect.ownKeys(Function.prototype).map(String).sort(),
  proto: Object.getOwnPropertyDescriptor(Object.prototype, '__proto__')?.get,
});
const before0 = snapshot();

const only = process.env.PROTO_STORE;
const stores0: Array<{ name: string; flags: () => string[]; cleanup?: () => Promise<void> }> = [
  { name: 'memory', flags: () => ['--storage-backend', 'memory'] },
  { name: 'file', flags: () => ['--storage-backend', 'file'] },
  (() => {
    const prefix = uniquePrefix('proto');
    return {
      name: 'redis',
      flags: () => ['--storage-backend', 'redis', '--redis-url', REDIS_URL, '--storage-prefix', prefix],
      cleanup: async () => void (await dropPrefix(prefix)),
    };
  })(),
];

const dataJson = (value: (k: string) => string) => `{${KEYS.map((k) => `${JSON.stringify(k)}:${JSON.stringify(value(k))}`).join(',')}}`;
const cmJson = (name: string, data: string, meta = '') => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"${meta}},"data":${data}}`;

function own(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj));
}

function is4xx(r: Reply, code: number, ...words: string[]): void {
  assert.equal(r.status, code, r.text);
  assert.equal(r.json?.kind, 'Status', r.text);
  for (const w of words) assert.ok(r.text.includes(w), `${JSON.stringify(w)} not in ${r.text}`);
}

const stores = stores0.filter((x) => !only || x.name === only);
for (const store of stores) {
  describe(`prototype keys are data (${store.name} store)`, () => {
    let s: TestServer;
    let n = 0;
    before(async () => {
      s = await startTestServer({ flags: store.flags() });
    });
    after(async () => {
      await s?.close();
      await store.cleanup?.();
    });

    /** Nothing in this process changed, and a fresh object carries nothing extra. */
    async function assertClean(): Promise<void> {
      assert.deepEqual(snapshot(), before0);
      const fresh: Record<string, unknown> = {};
      for (const k of ['polluted', 'allowed', 'insecureSkipTLSVerify']) assert.equal(fresh[k], undefined, k);
      const name = `clean-${++n}`;
      const r = await s.admin.request('POST', CM, cmJson(name, '{"a":"1"}'), JSON_CT);
      assert.equal(r.status, 201, r.text);
      assert.ok(!r.text.includes('polluted'), r.text);
      assert.deepEqual(Object.keys(r.json).sort(), ['apiVersion', 'data', 'kind', 'metadata']);
      assert.deepEqual(r.json.data, { a: '1' });
      assert.deepEqual(
        r.json.metadata.managedFields.map((e: { fieldsV1: unknown }) => e.fieldsV1),
        [{ 'f:data': { '.': {}, 'f:a': {} } }],
      );
    }

    async function create(name: string, data = dataJson((k) => `v-${k}`)): Promise<Reply> {
      const r = await s.admin.request('POST', CM, cmJson(name, data), JSON_CT);
      assert.equal(r.status, 201, r.text);
      return r;
    }

    async function dataOf(name: string): Promise<Record<string, unknown>> {
      const r = await s.admin.request('GET', `${CM}/${name}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(Object.getPrototypeOf(r.json.data), Object.prototype);
      return own(r.json.data);
    }

    const expected = (value: (k: string) => string) => Object.fromEntries(KEYS.map((k) => [k, value(k)]));

    it('create keeps every such key as data, with its field in managedFields', async () => {
      const r = await create('keys-create');
      assert.deepEqual(
        own(r.json.data),
        expected((k) => `v-${k}`),
      );
      const owned = Object.keys(r.json.metadata.managedFields[0].fieldsV1['f:data']).sort();
      assert.deepEqual(owned, ['.', ...KEYS.map((k) => `f:${k}`)].sort());
      assert.deepEqual(
        await dataOf('keys-create'),
        expected((k) => `v-${k}`),
      );
      await assertClean();
    });

    it('update, merge patch, strategic merge patch and JSON patch change and remove such keys', async () => {
      await create('keys-write');
      const put = await s.admin.request(
        'PUT',
        `${CM}/keys-write`,
        cmJson(
          'keys-write',
          dataJson((k) => `put-${k}`),
        ),
        JSON_CT,
      );
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(
        await dataOf('keys-write'),
        expected((k) => `put-${k}`),
      );

      for (const [ct, tag] of [
        [MERGE, 'merge'],
        [SMP, 'smp'],
      ] as const) {
        const r = await s.admin.request('PATCH', `${CM}/keys-write`, `{"data":${dataJson((k) => `${tag}-${k}`)}}`, ct);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(
          await dataOf('keys-write'),
          expected((k) => `${tag}-${k}`),
        );
      }
      const removed = await s.admin.request('PATCH', `${CM}/keys-write`, '{"data":{"__proto__":null,"constructor":null}}', SMP);
      assert.equal(removed.status, 200, removed.text);
      assert.deepEqual(Object.keys(await dataOf('keys-write')).sort(), KEYS.filter((k) => k !== '__proto__' && k !== 'constructor').sort());

      const ops = JSON.stringify([
        { op: 'add', path: '/data/__proto__', value: 'jp' },
        { op: 'add', path: '/data/constructor', value: 'jp-c' },
        { op: 'test', path: '/data/__proto__', value: 'jp' },
        { op: 'replace', path: '/data/prototype', value: 'jp-p' },
        { op: 'copy', from: '/data/prototype', path: '/data/valueOf' },
        { op: 'move', from: '/data/toString', path: '/data/moved' },
        { op: 'remove', path: '/data/hasOwnProperty' },
      ]);
      const jp = await s.admin.request('PATCH', `${CM}/keys-write`, ops, JSONP);
      assert.equal(jp.status, 200, jp.text);
      assert.deepEqual(await dataOf('keys-write'), { ['__proto__']: 'jp', constructor: 'jp-c', prototype: 'jp-p', valueOf: 'jp-p', moved: 'smp-toString' });
      await assertClean();
    });

    it('server-side apply owns such keys like any other, in YAML and JSON bodies', async () => {
      const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keys-apply\ndata:\n${KEYS.map((k) => `  ${k}: a-${k}\n`).join('')}`;
      const r = await s.admin.request('PATCH', `${CM}/keys-apply?fieldManager=applier`, yaml, APPLY);
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(
        own(r.json.data),
        expected((k) => `a-${k}`),
      );
      const entry = r.json.metadata.managedFields.find((e: { manager: string }) => e.manager === 'applier');
      assert.deepEqual(Object.keys(entry.fieldsV1['f:data']).sort(), KEYS.map((k) => `f:${k}`).sort());
      // Applying again without __proto__ gives it up and removes it; a JSON body works the same.
      const again = await s.admin.request('PATCH', `${CM}/keys-apply?fieldManager=applier`, cmJson('keys-apply', '{"constructor":"a2"}'), APPLY);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(await dataOf('keys-apply'), { constructor: 'a2' });
      await assertClean();
    });

    it('dry-run writes answer the object with such keys and store nothing', async () => {
      const r = await s.admin.request(
        'POST',
        `${CM}?dryRun=All`,
        cmJson(
          'keys-dry',
          dataJson((k) => `d-${k}`),
        ),
        JSON_CT,
      );
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(
        own(r.json.data),
        expected((k) => `d-${k}`),
      );
      assert.equal((await s.admin.request('GET', `${CM}/keys-dry`)).status, 404);
      await create('keys-dry2');
      const p = await s.admin.request('PATCH', `${CM}/keys-dry2?dryRun=All`, '{"data":{"__proto__":"dry"}}', SMP);
      assert.equal(p.status, 200, p.text);
      assert.equal(own(p.json.data)['__proto__'], 'dry');
      assert.equal((await dataOf('keys-dry2'))['__proto__'], 'v-__proto__');
      await assertClean();
    });

    it('YAML and protobuf request bodies carry such keys as data; Secret stringData too', async () => {
      const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keys-yaml\ndata:\n  __proto__: y\n  constructor: c\n`;
      const y = await s.admin.request('POST', CM, yaml, { 'content-type': 'application/yaml' });
      assert.equal(y.status, 201, y.text);
      assert.deepEqual(own(y.json.data), { ['__proto__']: 'y', constructor: 'c' });

      const obj = JSON.parse(cmJson('keys-pb', '{"__proto__":"pb","constructor":"pc"}', ',"labels":{"constructor":"l"}'));
      const pb = await s.admin.request('POST', CM, encodeEnvelope(obj), { 'content-type': 'application/vnd.kubernetes.protobuf' });
      assert.equal(pb.status, 201, pb.text);
      assert.deepEqual(own(pb.json.data), { ['__proto__']: 'pb', constructor: 'pc' });
      assert.deepEqual(own(pb.json.metadata.labels), { constructor: 'l' });

      const secret = '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"keys-secret"},"stringData":{"__proto__":"s","constructor":"t"}}';
      const sr = await s.admin.request('POST', `${NS}/secrets`, secret, JSON_CT);
      assert.equal(sr.status, 201, sr.text);
      assert.deepEqual(own(sr.json.data), { ['__proto__']: Buffer.from('s').toString('base64'), constructor: Buffer.from('t').toString('base64') });
      await assertClean();
    });

    it('a label or annotation key __proto__ is refused with 422 on every write path, and nothing is stored', async () => {
      await create('keys-labels');
      const labels = (v: string) => `{"metadata":{"labels":{"__proto__":${v}}}}`;
      const attempts: Array<[string, string, string, Record<string, string>]> = [
        ['POST', CM, cmJson('keys-labels-new', '{}', `,"labels":{"__proto__":${POLLUTION}}`), JSON_CT],
        ['POST', CM, cmJson('keys-labels-new', '{}', ',"labels":{"__proto__":"x"}'), JSON_CT],
        ['POST', CM, cmJson('keys-labels-new', '{}', ',"annotations":{"__proto__":"x"}'), JSON_CT],
        ['PUT', `${CM}/keys-labels`, cmJson('keys-labels', '{}', ',"labels":{"__proto__":"x"}'), JSON_CT],
        ['PATCH', `${CM}/keys-labels`, labels(POLLUTION), SMP],
        ['PATCH', `${CM}/keys-labels`, labels(POLLUTION), MERGE],
        ['PATCH', `${CM}/keys-labels`, labels('"x"'), SMP],
        ['PATCH', `${CM}/keys-labels`, '{"metadata":{"annotations":{"__proto__":"x"}}}', MERGE],
        [
          'PATCH',
          `${CM}/keys-labels`,
          JSON.stringify([
            { op: 'add', path: '/metadata/labels', value: {} },
            { op: 'add', path: '/metadata/labels/__proto__', value: 'x' },
          ]),
          JSONP,
        ],
        ['PATCH', `${CM}/keys-labels?fieldManager=m`, cmJson('keys-labels', '{}', ',"labels":{"__proto__":"x"}'), APPLY],
        ['PATCH', `${CM}/keys-labels?dryRun=All`, labels('"x"'), SMP],
      ];
      for (const [method, path, body, ct] of attempts) {
        const r = await s.admin.request(method, path, body, ct);
        is4xx(r, 422, '__proto__');
        assert.ok(/metadata\.(labels|annotations)/.test(r.text), r.text);
      }
      assert.equal((await s.admin.request('GET', `${CM}/keys-labels-new`)).status, 404);
      const live = await s.admin.request('GET', `${CM}/keys-labels`);
      assert.equal(live.json.metadata.labels, undefined);
      await assertClean();
    });

    it('constructor.prototype spellings are ordinary keys: refused where a string is due, missing paths for JSON patch', async () => {
      await create('keys-ctor');
      const attempts: Array<[string, Record<string, string>, number, string]> = [
        [`{"metadata":{"labels":{"constructor":{"prototype":${POLLUTION}}}}}`, SMP, 422, 'metadata.labels'],
        [`{"metadata":{"labels":{"constructor":{"prototype":${POLLUTION}}}}}`, MERGE, 422, 'metadata.labels'],
        [`{"data":{"constructor":{"prototype":${POLLUTION}}}}`, SMP, 422, 'data'],
        [`{"data":{"__proto__":${POLLUTION}}}`, MERGE, 422, 'data'],
        [JSON.stringify([{ op: 'add', path: '/metadata/labels/constructor/prototype/polluted', value: 'yes' }]), JSONP, 422, 'missing path'],
        [JSON.stringify([{ op: 'add', path: '/data/constructor/prototype', value: 'yes' }]), JSONP, 422, 'missing path'],
        [JSON.stringify([{ op: 'add', path: '/metadata/constructor/assign', value: 'yes' }]), JSONP, 422, 'missing path'],
        [JSON.stringify([{ op: 'add', path: '/__proto__/polluted', value: 'yes' }]), JSONP, 422, 'missing path'],
        [JSON.stringify([{ op: 'replace', path: '/metadata/toString', value: 'yes' }]), JSONP, 422, 'missing path'],
      ];
      for (const [body, ct, code, word] of attempts) {
        const r = await s.admin.request('PATCH', `${CM}/keys-ctor`, body, ct);
        is4xx(r, code, word);
      }
      // A label named constructor is a valid label, found by a selector as data.
      const ok = await s.admin.request('PATCH', `${CM}/keys-ctor`, '{"metadata":{"labels":{"constructor":"yes","toString":"t"}}}', SMP);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(own(ok.json.metadata.labels), { constructor: 'yes', toString: 't' });
      const sel = await s.admin.request('GET', `${CM}?labelSelector=constructor%3Dyes`);
      assert.deepEqual(
        sel.json.items.map((i: { metadata: { name: string } }) => i.metadata.name),
        ['keys-ctor'],
      );
      const none = await s.admin.request('GET', `${CM}?labelSelector=hasOwnProperty`);
      assert.deepEqual(none.json.items, []);
      is4xx(await s.admin.request('GET', `${CM}?labelSelector=__proto__`), 400, '__proto__');
      is4xx(await s.admin.request('GET', `${CM}?fieldSelector=metadata.__proto__%3Dx`), 400, '__proto__');
      is4xx(await s.admin.request('GET', `${CM}?fieldSelector=constructor%3Dx`), 400, 'field label not supported: constructor');
      for (const path of [
        '/api/v1/constructor',
        `${NS}/__proto__`,
        `${NS}/hasOwnProperty/x`,
        '/apis/constructor/v1',
        '/apis/__proto__/v1/toString',
        '/api/v1/namespaces/__proto__/configmaps/x',
        `${CM}/__proto__`,
      ]) {
        const r = await s.admin.request('GET', path);
        assert.equal(r.status, 404, `${path}: ${r.status} ${r.text}`);
      }
      is4xx(await s.admin.request('POST', CM, cmJson('__proto__', '{}'), JSON_CT), 422, 'metadata.name');
      const q = await s.admin.request('GET', `${CM}?__proto__=x&constructor=y`);
      assert.equal(q.status, 200, q.text);
      await assertClean();
    });

    it('a __proto__ field of a typed object is an unknown field at every depth: dropped, warned or refused', async () => {
      const body = (name: string) =>
        `{"__proto__":${POLLUTION},"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","__proto__":${POLLUTION},"constructor":{"prototype":${POLLUTION}}},"data":{"a":"1"}}`;
      const dropped = await s.admin.request('POST', CM, body('keys-unknown'), JSON_CT);
      assert.equal(dropped.status, 201, dropped.text);
      assert.ok(!dropped.text.includes('polluted'), dropped.text);
      assert.deepEqual(
        Object.keys(dropped.json.metadata).filter((k) => k === '__proto__' || k === 'constructor'),
        [],
      );
      const warned = await s.admin.request('POST', `${CM}?fieldValidation=Warn`, body('keys-unknown-w'), JSON_CT);
      assert.equal(warned.status, 201, warned.text);
      const warning = String(warned.headers['warning']);
      for (const f of ['__proto__', 'metadata.__proto__', 'metadata.constructor']) assert.ok(warning.includes(`unknown field \\"${f}\\"`), warning);
      const strict = await s.admin.request('POST', `${CM}?fieldValidation=Strict`, body('keys-unknown-s'), JSON_CT);
      is4xx(strict, 400, 'unknown field \\"__proto__\\"', 'unknown field \\"metadata.__proto__\\"');

      const pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"keys-pod"},"spec":{"__proto__":${POLLUTION},"containers":[{"name":"c","image":"i","__proto__":${POLLUTION},"env":[{"name":"__proto__","value":"a"},{"name":"constructor","value":"b"}]}]}}`;
      const p = await s.admin.request('POST', `${NS}/pods?fieldValidation=Warn`, pod, JSON_CT);
      assert.equal(p.status, 201, p.text);
      assert.ok(String(p.headers['warning']).includes('unknown field \\"spec.containers[0].__proto__\\"'), String(p.headers['warning']));
      assert.deepEqual(p.json.spec.containers[0].env, [
        { name: '__proto__', value: 'a' },
        { name: 'constructor', value: 'b' },
      ]);
      await assertClean();
    });

    it('list items keyed by a merge key named __proto__ merge, order, delete and apply as data', async () => {
      // A PodTemplate: its pod spec takes every change (kube's pod update rule refuses env changes on a Pod).
      const pod =
        '{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"keys-env"},"template":{"spec":{"containers":[{"name":"c","image":"i","env":[{"name":"__proto__","value":"a"},{"name":"constructor","value":"b"},{"name":"x","value":"c"}]}]}}}';
      assert.equal((await s.admin.request('POST', `${NS}/podtemplates`, pod, JSON_CT)).status, 201);
      const env = async () => (await s.admin.request('GET', `${NS}/podtemplates/keys-env`)).json.template.spec.containers[0].env;
      const merged = await s.admin.request(
        'PATCH',
        `${NS}/podtemplates/keys-env`,
        '{"template":{"spec":{"containers":[{"name":"c","env":[{"name":"__proto__","value":"z"}]}]}}}',
        SMP,
      );
      assert.equal(merged.status, 200, merged.text);
      assert.deepEqual(await env(), [
        { name: '__proto__', value: 'z' },
        { name: 'constructor', value: 'b' },
        { name: 'x', value: 'c' },
      ]);
      const ordered = await s.admin.request(
        'PATCH',
        `${NS}/podtemplates/keys-env`,
        '{"template":{"spec":{"containers":[{"name":"c","$setElementOrder/env":[{"name":"x"},{"name":"constructor"},{"name":"__proto__"}]}]}}}',
        SMP,
      );
      assert.equal(ordered.status, 200, ordered.text);
      assert.deepEqual(
        (await env()).map((e: { name: string }) => e.name),
        ['x', 'constructor', '__proto__'],
      );
      const deleted = await s.admin.request(
        'PATCH',
        `${NS}/podtemplates/keys-env`,
        '{"template":{"spec":{"containers":[{"name":"c","env":[{"name":"__proto__","$patch":"delete"}]}]}}}',
        SMP,
      );
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(
        (await env()).map((e: { name: string }) => e.name),
        ['x', 'constructor'],
      );
      const applied = await s.admin.request(
        'PATCH',
        `${NS}/podtemplates/keys-env?fieldManager=ap&force=true`,
        '{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"keys-env"},"template":{"spec":{"containers":[{"name":"c","image":"i","env":[{"name":"__proto__","value":"ap"}]}]}}}',
        APPLY,
      );
      assert.equal(applied.status, 200, applied.text);
      const entry = applied.json.metadata.managedFields.find((e: { manager: string }) => e.manager === 'ap');
      assert.ok(JSON.stringify(entry.fieldsV1).includes('k:{\\"name\\":\\"__proto__\\"}'), JSON.stringify(entry.fieldsV1));
      assert.deepEqual(
        (await env()).find((e: { name: string }) => e.name === '__proto__'),
        { name: '__proto__', value: 'ap' },
      );
      const dirs = [
        '{"metadata":{"labels":{"$retainKeys":["__proto__"],"__proto__":"x"}}}',
        '{"metadata":{"$deleteFromPrimitiveList/__proto__":["x"]}}',
        '{"template":{"spec":{"$setElementOrder/__proto__":[{"name":"x"}]}}}',
      ];
      for (const d of dirs) {
        const r = await s.admin.request('PATCH', `${NS}/podtemplates/keys-env`, d, SMP);
        assert.ok(r.status >= 200 && r.status < 500, `${r.status} ${r.text}`);
      }
      await assertClean();
    });

    it('the status and token subresources, DeleteOptions and managedFields sent by a client keep such keys inert', async () => {
      await create('keys-mf');
      const mf = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"keys-mf","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"__proto__":${POLLUTION},"f:data":{"f:__proto__":{}}}}]},"data":{"__proto__":"mf"}}`;
      const r = await s.admin.request('PUT', `${CM}/keys-mf`, mf, JSON_CT);
      assert.ok(r.status === 200, r.text);
      assert.equal(own(r.json.data)['__proto__'], 'mf');
      assert.ok(!r.text.includes('polluted'), r.text);

      const pod = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"keys-status"},"spec":{"containers":[{"name":"c","image":"i"}]}}';
      assert.equal((await s.admin.request('POST', `${NS}/pods`, pod, JSON_CT)).status, 201);
      const st = await s.admin.request(
        'PATCH',
        `${NS}/pods/keys-status/status`,
        `{"status":{"__proto__":${POLLUTION},"phase":"Running","constructor":{"prototype":${POLLUTION}}}}`,
        MERGE,
      );
      assert.equal(st.status, 200, st.text);
      assert.equal(st.json.status.phase, 'Running');
      assert.ok(!st.text.includes('polluted'), st.text);
      const sp = await s.admin.request('PATCH', `${NS}/pods/keys-status/status`, `{"status":{"__proto__":${POLLUTION}}}`, SMP);
      assert.equal(sp.status, 200, sp.text);

      // The token subresource and DeleteOptions bodies: a __proto__ member is no option.
      assert.equal(
        (await s.admin.request('POST', `${NS}/serviceaccounts`, '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"keys-sa"}}', JSON_CT)).status,
        201,
      );
      const tr = await s.admin.request(
        'POST',
        `${NS}/serviceaccounts/keys-sa/token`,
        '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"__proto__":{"audiences":["evil"]},"audiences":["good"]}}',
        JSON_CT,
      );
      assert.equal(tr.status, 201, tr.text);
      assert.deepEqual(tr.json.spec.audiences, ['good']);
      const del = await s.admin.request(
        'DELETE',
        `${CM}/keys-mf`,
        `{"apiVersion":"v1","kind":"DeleteOptions","__proto__":{"dryRun":["All"]},"preconditions":{"__proto__":{"uid":"nope"}}}`,
        JSON_CT,
      );
      assert.equal(del.status, 200, del.text);
      assert.equal((await s.admin.request('GET', `${CM}/keys-mf`)).status, 404);
      await assertClean();
    });
  });
}
