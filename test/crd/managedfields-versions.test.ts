// managedFields across the versions of a custom resource, as kube keeps them:
// each entry carries the apiVersion it was written through, and server-side
// apply compares an owner in its own version (the live and the new object
// converted to it by the CRD's webhook), so conflicts are found across
// versions, an applier's dropped fields are pruned in the version it applied
// them in, and an entry naming a version the CRD no longer has fails an apply
// (kube's "request to convert CR to an invalid group/version") and is dropped
// by other writes. Uses the real HTTPS webhook of convertwebhook.ts (Gadgets:
// v1 `hostPort` ⇄ v2 `host`/`port`) and kubectl 1.33 when installed.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, waitEstablished } from './fixtures.js';
import { installGadgets, startConversionWebhook, type ConversionWebhook } from './convertwebhook.js';
import { findKubectl, Kubectl, stopAll } from '../e2e/helpers.js';
import { eventually } from '../helpers/eventually.js';

const kubectlBinary = findKubectl('1.33') ?? findKubectl();

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const base = (v: string, plural = 'gadgets', group = 'conv.example.com') => `/apis/${group}/${v}/namespaces/default/${plural}`;
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

function entries(obj: Json): Array<{ manager: string; operation: string; apiVersion: string; fields: Json }> {
  return (obj.metadata.managedFields ?? []).map((e: Json) => ({ manager: e.manager, operation: e.operation, apiVersion: e.apiVersion, fields: e.fieldsV1 }));
}

describe('server-side apply through two versions of a webhook-converted CRD', () => {
  let s: TestServer;
  let hook: ConversionWebhook;
  const apply = (v: string, name: string, spec: Json, manager: string, force = false) =>
    s.admin.request(
      'PATCH',
      `${base(v)}/${name}?fieldManager=${manager}${force ? '&force=true' : ''}`,
      JSON.stringify({ apiVersion: `conv.example.com/${v}`, kind: 'Gadget', metadata: { name }, spec }),
      APPLY,
    );
  before(async () => {
    hook = await startConversionWebhook();
    s = await startTestServer();
    await installGadgets(s, hook);
  });
  after(async () => {
    await s.close();
    await hook.close();
  });
  beforeEach(() => {
    hook.mode = 'ok';
  });

  it('records each entry in the version it was written through', async () => {
    const a = await apply('v1', 'g1', { hostPort: 'one.org:1' }, 'one');
    assert.equal(a.status, 201, a.text);
    assert.deepEqual(entries(a.json), [{ manager: 'one', operation: 'Apply', apiVersion: 'conv.example.com/v1', fields: { 'f:spec': { 'f:hostPort': {} } } }]);
    const v2 = await s.admin.request('GET', `${base('v2')}/g1`);
    assert.deepEqual(v2.json.spec, { host: 'one.org', port: 1 });
    assert.deepEqual(entries(v2.json), entries(a.json), 'managedFields are the same through every version: the entry keeps its apiVersion and v1 field set');
  });

  it("finds a conflict with an owner recorded in another version, in the owner's version", async () => {
    // v2's port is a part of v1's hostPort: changing it changes what "one" owns.
    const c = await apply('v2', 'g1', { port: 2 }, 'two');
    assert.equal(c.status, 409, c.text);
    assert.equal(c.json.reason, 'Conflict');
    assert.equal(c.json.message, 'Apply failed with 1 conflict: conflict with "one": .spec.hostPort');
    assert.deepEqual(c.json.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "one"', field: '.spec.hostPort' }]);
    assert.deepEqual((await s.admin.request('GET', `${base('v2')}/g1`)).json.spec, { host: 'one.org', port: 1 }, 'nothing written');
  });

  it("does not conflict when the other version's value is unchanged, and shares the field", async () => {
    const same = await apply('v2', 'g1', { host: 'one.org', port: 1 }, 'two');
    assert.equal(same.status, 200, same.text);
    const byManager = new Map(entries(same.json).map((e) => [e.manager, e]));
    assert.deepEqual(byManager.get('one'), {
      manager: 'one',
      operation: 'Apply',
      apiVersion: 'conv.example.com/v1',
      fields: { 'f:spec': { 'f:hostPort': {} } },
    });
    assert.deepEqual(byManager.get('two'), {
      manager: 'two',
      operation: 'Apply',
      apiVersion: 'conv.example.com/v2',
      fields: { 'f:spec': { 'f:host': {}, 'f:port': {} } },
    });
  });

  it("takes an owner's field in its version when forced", async () => {
    const f = await apply('v2', 'g1', { host: 'one.org', port: 3 }, 'two', true);
    assert.equal(f.status, 200, f.text);
    assert.deepEqual(f.json.spec, { host: 'one.org', port: 3 });
    assert.deepEqual(
      entries(f.json).map((e) => [e.manager, e.apiVersion]),
      [['two', 'conv.example.com/v2']],
      '"one" lost its only field and its entry',
    );
  });

  it('prunes what an applier dropped in the version it applied it in', async () => {
    assert.equal((await apply('v1', 'g2', { hostPort: 'p.org:7' }, 'pruner')).status, 201);
    // The same manager now applies through v2 without the fields it applied through v1.
    const p = await apply('v2', 'g2', {}, 'pruner');
    assert.equal(p.status, 200, p.text);
    assert.equal(p.json.spec?.host, undefined, p.text);
    assert.equal(p.json.spec?.port, undefined, p.text);
    assert.deepEqual(
      entries(p.json).map((e) => [e.manager, e.operation, e.apiVersion]),
      [['pruner', 'Apply', 'conv.example.com/v2']],
      "an applier's entry takes the version of its last apply",
    );
    assert.deepEqual((await s.admin.request('GET', `${base('v1')}/g2`)).json.spec ?? {}, {});
  });

  it('keeps what another owner holds when pruning across versions', async () => {
    assert.equal((await apply('v1', 'g3', { hostPort: 'k.org:8' }, 'first')).status, 201);
    assert.equal((await apply('v2', 'g3', { host: 'k.org', port: 8 }, 'second')).status, 200);
    const p = await apply('v2', 'g3', {}, 'first');
    assert.equal(p.status, 200, p.text);
    assert.deepEqual(p.json.spec, { host: 'k.org', port: 8 }, '"second" still owns host and port');
    // By manager: entries are ordered by their time in seconds first (kube's sort), and "first" applied last,
    // possibly in a later second than "second".
    assert.deepEqual(
      entries(p.json)
        .map((e) => [e.manager, e.apiVersion, e.fields])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [
        ['first', 'conv.example.com/v2', { 'f:spec': {} }],
        ['second', 'conv.example.com/v2', { 'f:spec': { 'f:host': {}, 'f:port': {} } }],
      ],
    );
  });

  it('takes from an owner in another version what an update through this one changes', async () => {
    assert.equal((await apply('v1', 'g4', { hostPort: 'u.org:9' }, 'applier')).status, 201);
    const m = await s.admin.request(
      'PATCH',
      `${base('v2')}/g4?fieldManager=editor`,
      { spec: { port: 10 } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(m.status, 200, m.text);
    const got = new Map(entries(m.json).map((e) => [e.manager, e]));
    assert.equal(got.get('applier'), undefined, 'the v1 applier owned hostPort, which the port change modified');
    assert.deepEqual(got.get('editor'), { manager: 'editor', operation: 'Update', apiVersion: 'conv.example.com/v2', fields: { 'f:spec': { 'f:port': {} } } });
    // An update through v1 by the same manager is another entry (Update entries are per version, as kube's).
    const cur = (await s.admin.request('GET', `${base('v1')}/g4`)).json as Json;
    const u = await s.admin.request('PUT', `${base('v1')}/g4?fieldManager=editor`, { ...cur, spec: { hostPort: 'u.org:11' } });
    assert.equal(u.status, 200, u.text);
    assert.deepEqual(
      entries(u.json).map((e) => [e.manager, e.apiVersion, e.fields]),
      [['editor', 'conv.example.com/v1', { 'f:spec': { 'f:hostPort': {} } }]],
      'the v2 entry lost port, changed in v2 terms too',
    );
  });

  it("answers an apply kube's 500 with the webhook's error when an owner's version cannot be converted to", async () => {
    assert.equal((await apply('v1', 'g5', { hostPort: 'w.org:1' }, 'one')).status, 201);
    hook.mode = 'failure';
    const before = (await s.admin.request('GET', `${base('v2')}/g5`)).json as Json;
    const a = await apply('v2', 'g5', { host: 'w.org' }, 'two');
    assert.equal(a.status, 500, a.text);
    assert.equal(a.json.reason, undefined);
    assert.match(a.json.message, /^conversion webhook for conv\.example\.com\/v2, Kind=Gadget returned invalid response: cannot convert gadgets today$/);
    hook.mode = 'ok';
    assert.equal((await s.admin.request('GET', `${base('v2')}/g5`)).json.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing written');
  });

  it('applies through two versions with kubectl --server-side, conflicts included', { skip: kubectlBinary ? false : 'kubectl is not installed' }, async () => {
    const k = new Kubectl(kubectlBinary!, s.kubeconfig);
    try {
      const v1 = 'apiVersion: conv.example.com/v1\nkind: Gadget\nmetadata:\n  name: kc\n  namespace: default\nspec:\n  hostPort: kube.example:6443\n';
      const v2 = 'apiVersion: conv.example.com/v2\nkind: Gadget\nmetadata:\n  name: kc\n  namespace: default\nspec:\n  port: 443\n';
      assert.match(await k.ok(['apply', '--server-side', '--field-manager=ops', '-f', '-'], v1), /gadget\.conv\.example\.com\/kc serverside-applied/);
      const refused = await k.run(['apply', '--server-side', '--field-manager=tuner', '-f', '-'], v2);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /Apply failed with 1 conflict: conflict with "ops": \.spec\.hostPort/);
      assert.match(await k.ok(['apply', '--server-side', '--force-conflicts', '--field-manager=tuner', '-f', '-'], v2), /serverside-applied/);
      const got = await k.ok([
        'get',
        'gadgets.v1.conv.example.com',
        'kc',
        '-n',
        'default',
        '--show-managed-fields',
        '-o',
        'jsonpath={.spec.hostPort} {range .metadata.managedFields[*]}{.manager}@{.apiVersion} {end}',
      ]);
      assert.equal(got.trim(), 'kube.example:443 tuner@conv.example.com/v2');
    } finally {
      await stopAll();
    }
  });
});

describe('managedFields naming a version the CRD no longer has', () => {
  let s: TestServer;
  const GROUP = 'gone.example.com';
  const crd = (versions: string[]) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: versions.map((name) => ({
        name,
        served: true,
        storage: name === 'v2',
        schema: {
          openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } } } },
        },
      })),
    },
  });
  before(async () => {
    s = await startTestServer();
    const r = await s.admin.request('POST', CRD_PATH, crd(['v1', 'v2']));
    assert.equal(r.status, 201, r.text);
    await waitEstablished(s, `widgets.${GROUP}`, base('v1', 'widgets', GROUP));
  });
  after(async () => {
    await s.close();
  });

  it("fails an apply with crConverter's error and drops the entries on other writes, as kube does", async () => {
    const a = await s.admin.request(
      'PATCH',
      `${base('v1', 'widgets', GROUP)}/w?fieldManager=old`,
      JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } }),
      APPLY,
    );
    assert.equal(a.status, 201, a.text);
    assert.equal(a.json.metadata.managedFields[0].apiVersion, `${GROUP}/v1`);
    // Conversion None: an owner in v1 is compared as it is; an apply through v2 sees its conflict.
    const c = await s.admin.request(
      'PATCH',
      `${base('v2', 'widgets', GROUP)}/w?fieldManager=new`,
      JSON.stringify({ apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w' }, spec: { size: 2 } }),
      APPLY,
    );
    assert.equal(c.status, 409, c.text);
    // v1 goes away (it was never the storage version, so storedVersions allows it).
    const cur = (await s.admin.request('GET', `${CRD_PATH}/widgets.${GROUP}`)).json as Json;
    const u = await s.admin.request('PUT', `${CRD_PATH}/widgets.${GROUP}`, { ...cur, spec: crd(['v2']).spec });
    assert.equal(u.status, 200, u.text);
    await waitGone(s, base('v1', 'widgets', GROUP));
    const refused = await s.admin.request(
      'PATCH',
      `${base('v2', 'widgets', GROUP)}/w?fieldManager=new`,
      JSON.stringify({ apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w' }, spec: { color: 'red' } }),
      APPLY,
    );
    assert.equal(refused.status, 500, refused.text);
    assert.equal(refused.json.message, `request to convert CR to an invalid group/version: ${GROUP}/v1`);
    // A merge patch goes through and leaves managedFields empty (kube's UpdateNoErrors); then apply works again.
    const p = await s.admin.request(
      'PATCH',
      `${base('v2', 'widgets', GROUP)}/w?fieldManager=patcher`,
      { spec: { color: 'blue' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(p.status, 200, p.text);
    assert.equal(p.json.metadata.managedFields, undefined);
    assert.deepEqual(p.json.spec, { size: 1, color: 'blue' });
    const ok = await s.admin.request(
      'PATCH',
      `${base('v2', 'widgets', GROUP)}/w?fieldManager=new&force=true`,
      JSON.stringify({ apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w' }, spec: { color: 'red' } }),
      APPLY,
    );
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json.spec, { size: 1, color: 'red' });
  });
});

async function waitGone(s: TestServer, path: string): Promise<void> {
  await eventually(`${path} to be unserved`, async () => (await s.admin.request('GET', path)).status === 404);
}
