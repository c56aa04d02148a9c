// Custom resources served from a CustomResourceDefinition on a live registry:
// lifecycle conditions, discovery and OpenAPI following the CRD, every verb
// through the generic handlers, status and scale subresources, printer
// columns, selectable fields, name conflicts, and deletion of the CRD with
// its objects.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from './fixtures.js';
import { until } from '../gc/helpers.js';

type Json = Record<string, any>;
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';

describe('custom resources', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    const r = await s.admin.request('POST', CRD_PATH, crontabCrd());
    assert.equal(r.status, 201, r.text);
    await waitEstablished(s, 'crontabs.stable.example.com', CT);
  });
  after(async () => {
    await s.close();
  });

  it('sets NamesAccepted, Established, acceptedNames and storedVersions', async () => {
    const crd = (await s.admin.request('GET', `${CRD_PATH}/crontabs.stable.example.com`)).json as Json;
    const cond = (t: string) => crd.status.conditions.find((c: Json) => c.type === t);
    assert.equal(cond('NamesAccepted').status, 'True');
    assert.equal(cond('NamesAccepted').reason, 'NoConflicts');
    assert.equal(cond('Established').reason, 'InitialNamesAccepted');
    assert.equal(crd.status.acceptedNames.plural, 'crontabs');
    assert.deepEqual(crd.status.acceptedNames.shortNames, ['ct']);
    assert.deepEqual(crd.status.storedVersions, ['v1']);
  });

  it('is in /apis, /apis/<group>, the resource list, aggregated discovery and OpenAPI v2/v3', async () => {
    const apis = (await s.admin.request('GET', '/apis')).json as Json;
    assert.ok(apis.groups.some((g: Json) => g.name === 'stable.example.com' && g.preferredVersion.version === 'v1'));
    const group = await s.admin.request('GET', '/apis/stable.example.com');
    assert.equal(group.status, 200, group.text);
    const list = (await s.admin.request('GET', '/apis/stable.example.com/v1')).json as Json;
    const names = list.resources.map((r: Json) => r.name).sort();
    assert.deepEqual(names, ['crontabs', 'crontabs/scale', 'crontabs/status']);
    const ct = list.resources.find((r: Json) => r.name === 'crontabs');
    assert.deepEqual(ct.shortNames, ['ct']);
    assert.equal(ct.namespaced, true);
    assert.equal(ct.kind, 'CronTab');
    const scale = list.resources.find((r: Json) => r.name === 'crontabs/scale');
    assert.equal(scale.group, 'autoscaling');
    assert.equal(scale.kind, 'Scale');
    const agg = await s.admin.request('GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    const g = (agg.json as Json).items.find((x: Json) => x.metadata.name === 'stable.example.com');
    assert.equal(g.versions[0].resources[0].resource, 'crontabs');
    const v3 = (await s.admin.request('GET', '/openapi/v3')).json as Json;
    const url = v3.paths['apis/stable.example.com/v1'].serverRelativeURL;
    const doc = (await s.admin.request('GET', url)).json as Json;
    const def = doc.components.schemas['com.example.stable.v1.CronTab'];
    assert.equal(def.properties.spec.properties.replicas.type, 'integer');
    assert.deepEqual(def['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
    const v2 = (await s.admin.request('GET', '/openapi/v2')).json as Json;
    assert.ok(v2.definitions['com.example.stable.v1.CronTabList']);
    assert.ok(v2.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}']);
  });

  it('autoregisters a local APIService for the group version', async () => {
    const a = await until('APIService v1.stable.example.com', async () => {
      const r = await s.admin.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com');
      return r.status === 200 ? (r.json as Json) : undefined;
    });
    assert.equal(a.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'true');
    assert.equal(a.spec.groupPriorityMinimum, 1000);
    assert.equal(a.spec.versionPriority, 100);
    assert.equal(a.spec.service, undefined);
  });

  it('serves create, get, list, update, patches, delete, with generation on spec only', async () => {
    const c = await s.admin.request('POST', CT, crontab('one', { cronSpec: '* * * * */5', image: 'img:1', replicas: 1 }));
    assert.equal(c.status, 201, c.text);
    const o = c.json as Json;
    assert.equal(o.metadata.generation, 1);
    assert.equal(o.apiVersion, 'stable.example.com/v1');
    assert.ok(o.metadata.uid);
    const got = await s.admin.request('GET', `${CT}/one`);
    assert.equal(got.status, 200);
    const listed = (await s.admin.request('GET', CT)).json as Json;
    assert.equal(listed.kind, 'CronTabList');
    assert.deepEqual(
      listed.items.map((i: Json) => i.metadata.name),
      ['one'],
    );
    const merged = await s.admin.request('PATCH', `${CT}/one`, { spec: { replicas: 2 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(merged.status, 200, merged.text);
    assert.equal((merged.json as Json).metadata.generation, 2);
    const jp = await s.admin.request('PATCH', `${CT}/one`, [{ op: 'replace', path: '/spec/image', value: 'img:2' }], {
      'content-type': 'application/json-patch+json',
    });
    assert.equal(jp.status, 200, jp.text);
    const smp = await s.admin.request('PATCH', `${CT}/one`, { spec: { replicas: 3 } }, { 'content-type': 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 415, smp.text);
    const cur = jp.json as Json;
    cur.metadata.labels = { tier: 'a' };
    const put = await s.admin.request('PUT', `${CT}/one`, cur);
    assert.equal(put.status, 200, put.text);
    assert.equal((put.json as Json).metadata.generation, 3, 'a label change does not bump the generation');
    const dry = await s.admin.request('POST', `${CT}?dryRun=All`, crontab('dry', { image: 'x' }));
    assert.equal(dry.status, 201);
    assert.equal((await s.admin.request('GET', `${CT}/dry`)).status, 404);
    const other = await s.admin.request('POST', CT, crontab('two', { image: 'img:9' }));
    assert.equal(other.status, 201);
    const sel = (await s.admin.request('GET', `${CT}?fieldSelector=spec.image%3Dimg:9`)).json as Json;
    assert.deepEqual(
      sel.items.map((i: Json) => i.metadata.name),
      ['two'],
    );
    const lsel = (await s.admin.request('GET', `${CT}?labelSelector=tier%3Da`)).json as Json;
    assert.deepEqual(
      lsel.items.map((i: Json) => i.metadata.name),
      ['one'],
    );
    const page = (await s.admin.request('GET', `${CT}?limit=1`)).json as Json;
    assert.equal(page.items.length, 1);
    assert.ok(page.metadata.continue);
    const badField = await s.admin.request('GET', `${CT}?fieldSelector=spec.cronSpec%3Dx`);
    assert.equal(badField.status, 400, badField.text);
    const del = await s.admin.request('DELETE', `${CT}/two`);
    assert.equal(del.status, 200, del.text);
  });

  it('deletes a collection by label, and watches with a selectable field selector', async () => {
    const path = '/apis/stable.example.com/v1/namespaces/default/crontabs';
    const from = ((await s.admin.request('GET', path)).json as Json).metadata.resourceVersion;
    const w = await s.admin.watch(`${path}?watch=1&resourceVersion=${from}&fieldSelector=spec.image%3Dwatched`);
    try {
      for (const [n, image] of [
        ['dc1', 'watched'],
        ['dc2', 'other'],
        ['dc3', 'watched'],
      ] as const) {
        const c = await s.admin.request('POST', path, { ...crontab(n, { image }), metadata: { name: n, labels: { batch: 'dc' } } });
        assert.equal(c.status, 201, c.text);
      }
      const evs = await w.take(2, 10_000);
      assert.deepEqual(
        evs.map((e: Json) => `${e.type} ${e.object.metadata.name}`),
        ['ADDED dc1', 'ADDED dc3'],
      );
    } finally {
      w.stop();
    }
    const dc = await s.admin.request('DELETE', `${path}?labelSelector=batch%3Ddc`);
    assert.equal(dc.status, 200, dc.text);
    assert.equal((dc.json as Json).kind, 'CronTabList');
    const left = ((await s.admin.request('GET', `${path}?labelSelector=batch%3Ddc`)).json as Json).items;
    assert.deepEqual(left, []);
  });

  it('bumps the generation on a status change when the CRD has no status subresource (status is part of the object then)', async () => {
    const crd = crontabCrd({ group: 'nostatus.example.com', plural: 'plains', kind: 'Plain', shortNames: [] }) as Json;
    delete crd.spec.versions[0].subresources;
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    const path = '/apis/nostatus.example.com/v1/namespaces/default/plains';
    await waitEstablished(s, 'plains.nostatus.example.com', path);
    const c = await s.admin.request('POST', path, { ...crontab('p', { image: 'a' }, 'nostatus.example.com', 'Plain'), status: { replicas: 1 } });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual((c.json as Json).status, { replicas: 1 }, 'status is kept on create without a status subresource');
    const st = await s.admin.request('PATCH', `${path}/p`, { status: { replicas: 2 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(st.status, 200, st.text);
    assert.equal((st.json as Json).metadata.generation, 2);
    const lbl = await s.admin.request('PATCH', `${path}/p`, { metadata: { labels: { a: 'b' } } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal((lbl.json as Json).metadata.generation, 2, 'metadata changes do not count');
    assert.equal((await s.admin.request('GET', `${path}/p/status`)).status, 404);
  });

  it('keeps status and spec apart through the status subresource', async () => {
    await s.admin.request('POST', CT, crontab('st', { image: 'a', replicas: 1 }));
    const withStatus = { ...crontab('st', { image: 'a', replicas: 1 }), status: { replicas: 7 } };
    const st = await s.admin.request('PUT', `${CT}/st/status`, withStatus);
    assert.equal(st.status, 200, st.text);
    assert.equal((st.json as Json).status.replicas, 7);
    assert.equal((st.json as Json).metadata.generation, 1, 'a status write does not bump the generation');
    const main = { ...(st.json as Json), spec: { image: 'b', replicas: 1 }, status: { replicas: 0 } };
    const put = await s.admin.request('PUT', `${CT}/st`, main);
    assert.equal(put.status, 200, put.text);
    assert.equal((put.json as Json).status.replicas, 7, 'PUT on the object ignores status');
    assert.equal((put.json as Json).spec.image, 'b');
    const spec2 = { ...(put.json as Json), spec: { image: 'zzz' } };
    const st2 = await s.admin.request('PUT', `${CT}/st/status`, spec2);
    assert.equal((st2.json as Json).spec.image, 'b', 'PUT on status ignores the spec');
  });

  it('serves autoscaling/v1 Scale from the scale paths, and writes replicas through it', async () => {
    await s.admin.request('POST', CT, crontab('sc', { image: 'a', replicas: 2 }));
    await s.admin.request('PATCH', `${CT}/sc/status`, { status: { replicas: 2, labelSelector: 'app=sc' } }, { 'content-type': 'application/merge-patch+json' });
    const g = await s.admin.request('GET', `${CT}/sc/scale`);
    assert.equal(g.status, 200, g.text);
    const sc = g.json as Json;
    assert.equal(sc.kind, 'Scale');
    assert.equal(sc.apiVersion, 'autoscaling/v1');
    assert.deepEqual(sc.spec, { replicas: 2 });
    assert.deepEqual(sc.status, { replicas: 2, selector: 'app=sc' });
    const p = await s.admin.request('PATCH', `${CT}/sc/scale`, { spec: { replicas: 5 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(p.status, 200, p.text);
    assert.equal((p.json as Json).spec.replicas, 5);
    // A custom resource's Scale takes no strategic merge patch (built-in kinds' does), as apiextensions-apiserver.
    const smp = await s.admin.request('PATCH', `${CT}/sc/scale`, { spec: { replicas: 6 } }, { 'content-type': 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 415, smp.text);
    assert.doesNotMatch((smp.json as Json).message, /strategic/);
    const obj = (await s.admin.request('GET', `${CT}/sc`)).json as Json;
    assert.equal(obj.spec.replicas, 5);
    assert.equal(obj.metadata.generation, 2);
    const neg = await s.admin.request('PUT', `${CT}/sc/scale`, { ...sc, spec: { replicas: -1 } });
    assert.equal(neg.status, 422, neg.text);
    assert.match((neg.json as Json).message, /spec\.replicas: Invalid value: -1: must be greater than or equal to 0/);
    const stale = await s.admin.request('PUT', `${CT}/sc/scale`, { ...sc, spec: { replicas: 1 } });
    assert.equal(stale.status, 409, stale.text);
  });

  it('records a write through /scale in managedFields as kube does: the scaler owns the replicas, with subresource "scale"', async () => {
    const applyBody = (replicas: number) => ({
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTab',
      metadata: { name: 'mf' },
      spec: { cronSpec: '* * * * *', image: 'a', replicas },
    });
    const apply = (replicas: number) =>
      s.admin.request('PATCH', `${CT}/mf?fieldManager=applier`, applyBody(replicas), { 'content-type': 'application/apply-patch+yaml' });
    assert.equal((await apply(1)).status, 201);
    const p = await s.admin.request(
      'PATCH',
      `${CT}/mf/scale?fieldManager=scaler`,
      { spec: { replicas: 3 } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(p.status, 200, p.text);
    const managed = async () => ((await s.admin.request('GET', `${CT}/mf`)).json as Json).metadata.managedFields as Json[];
    const entries = await managed();
    const scaler = entries.find((e) => e.manager === 'scaler');
    assert.ok(scaler, JSON.stringify(entries));
    assert.equal(scaler.operation, 'Update');
    assert.equal(scaler.subresource, 'scale');
    assert.equal(scaler.apiVersion, 'stable.example.com/v1');
    assert.deepEqual(scaler.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    const applier = entries.find((e) => e.manager === 'applier');
    assert.deepEqual(applier?.fieldsV1['f:spec'], { 'f:cronSpec': {}, 'f:image': {} }, 'the applier lost the replicas it no longer set');
    // Another value from the applier now conflicts with the scaler, named with its subresource.
    const conflict = await apply(5);
    assert.equal(conflict.status, 409, conflict.text);
    assert.match((conflict.json as Json).message, /conflict with "scaler" with subresource "scale" using stable\.example\.com\/v1: \.spec\.replicas/);
    // The same value is shared, not a conflict.
    assert.equal((await apply(3)).status, 200);
    // Scaling to the replicas it already has changes no owner.
    const before = await managed();
    assert.equal(
      (await s.admin.request('PATCH', `${CT}/mf/scale?fieldManager=other`, { spec: { replicas: 3 } }, { 'content-type': 'application/merge-patch+json' }))
        .status,
      200,
    );
    assert.deepEqual(await managed(), before);
  });

  it('answers a Table with the printer columns (priority 1 marked for -o wide) and nulls for absent values', async () => {
    await s.admin.request('POST', CT, crontab('tb', { cronSpec: '*/1 * * * *', image: 'im' }));
    const r = await s.admin.request('GET', `${CT}/tb`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(r.status, 200, r.text);
    const t = r.json as Json;
    assert.deepEqual(
      t.columnDefinitions.map((c: Json) => [c.name, c.type, c.priority]),
      [
        ['Name', 'string', 0],
        ['Spec', 'string', 0],
        ['Replicas', 'integer', 0],
        ['Image', 'string', 1],
        ['Age', 'date', 0],
      ],
    );
    assert.deepEqual(t.rows[0].cells.slice(0, 4), ['tb', '*/1 * * * *', null, 'im']);
  });

  it("prints with kube's default table when a column's jsonPath is outside kube's JSONPath (a script index is never evaluated)", async () => {
    const crd = crontabCrd({ plural: 'scripttabs', kind: 'ScriptTab', shortNames: [] }) as Json;
    crd.spec.versions[0].additionalPrinterColumns = [
      { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' },
      { name: 'Last', type: 'string', jsonPath: '.spec.list[(@.length-1)]' },
    ];
    // kube's CRD validation checks only that a column's path starts with '.'; its table convertor then cannot parse it.
    const r = await s.admin.request('POST', CRD_PATH, crd);
    assert.equal(r.status, 201, r.text);
    const path = '/apis/stable.example.com/v1/namespaces/default/scripttabs';
    await waitEstablished(s, 'scripttabs.stable.example.com', path);
    assert.equal((await s.admin.request('POST', path, crontab('st', { cronSpec: '* * * * *' }, 'stable.example.com', 'ScriptTab'))).status, 201);
    const t = (await s.admin.request('GET', `${path}/st`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })).json as Json;
    assert.deepEqual(
      t.columnDefinitions.map((c: Json) => c.name),
      ['Name', 'Created At'],
    );
    assert.equal(t.rows[0].cells[0], 'st');
  });

  it('refuses a CRD whose rule does not type-check (422 naming the rule), storing nothing', async () => {
    const bad = crontabCrd({ plural: 'typedtabs', kind: 'TypedTab', shortNames: [] }) as Json;
    const spec = bad.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    spec['x-kubernetes-validations'] = [{ rule: 'self.replicas >= 0' }, { rule: 'self.cronSpec > 1', message: 'bad' }];
    const r = await s.admin.request('POST', CRD_PATH, bad);
    assert.equal(r.status, 422, r.text);
    const st = r.json as Json;
    assert.equal(st.reason, 'Invalid');
    assert.deepEqual(
      st.details.causes.map((c: Json) => [c.field, c.message]),
      [
        [
          'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule',
          'Invalid value: {"message":"bad","rule":"self.cronSpec > 1"}: compilation failed: ERROR: <input>:1:15: found no matching overload for \'_>_\' applied to \'(string, int)\'\n | self.cronSpec > 1\n | ..............^',
        ],
      ],
    );
    assert.equal((await s.admin.request('GET', `${CRD_PATH}/typedtabs.stable.example.com`)).status, 404);
  });

  it('refuses a CRD whose kind or plural is taken in its group (KindConflict, PluralConflict), and does not serve it', async () => {
    const clash = crontabCrd({ group: 'stable.example.com', plural: 'othertabs', kind: 'CronTab', shortNames: [] }) as Json;
    clash.spec.names.singular = 'othertab';
    const r = await s.admin.request('POST', CRD_PATH, clash);
    assert.equal(r.status, 201, r.text);
    const crd = await until('NamesAccepted False', async () => {
      const g = (await s.admin.request('GET', `${CRD_PATH}/othertabs.stable.example.com`)).json as Json;
      const c = g.status?.conditions?.find((x: Json) => x.type === 'NamesAccepted');
      return c ? g : undefined;
    });
    const c = crd.status.conditions.find((x: Json) => x.type === 'NamesAccepted');
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'KindConflict');
    assert.equal(c.message, '"CronTab" is already in use');
    assert.equal(crd.status.conditions.find((x: Json) => x.type === 'Established')?.status, 'False');
    assert.equal((await s.admin.request('GET', '/apis/stable.example.com/v1/namespaces/default/othertabs')).status, 404);
    const builtin = crontabCrd({ group: 'apiregistration.k8s.io', plural: 'apiservices', kind: 'Thing' });
    (builtin as Json).metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, test' };
    const rb = await s.admin.request('POST', CRD_PATH, builtin);
    assert.equal(rb.status, 201, rb.text);
    const b = await until('built-in clash refused', async () => {
      const g = (await s.admin.request('GET', `${CRD_PATH}/apiservices.apiregistration.k8s.io`)).json as Json;
      return g.status?.conditions?.find((x: Json) => x.type === 'NamesAccepted');
    });
    assert.equal(b.reason, 'PluralConflict');
    assert.equal((await s.admin.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices')).status, 200, 'the built-in is still served');
  });

  it('deletes a CRD with its objects (customresourcecleanup finalizer), then stops serving it', async () => {
    const crd = crontabCrd({ group: 'gone.example.com', plural: 'gadgets', kind: 'Gadget', shortNames: [], scope: 'Cluster' });
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    const path = '/apis/gone.example.com/v1/gadgets';
    await waitEstablished(s, 'gadgets.gone.example.com', path);
    for (const n of ['a', 'b']) assert.equal((await s.admin.request('POST', path, crontab(n, { image: n }, 'gone.example.com', 'Gadget'))).status, 201);
    const d = await s.admin.request('DELETE', `${CRD_PATH}/gadgets.gone.example.com`);
    assert.equal(d.status, 200, d.text);
    const pending = d.json as Json;
    assert.ok(pending.metadata.deletionTimestamp);
    assert.deepEqual(pending.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    assert.equal(pending.status.conditions.find((c: Json) => c.type === 'Terminating')?.status, 'True');
    await until('the CRD gone', async () => ((await s.admin.request('GET', `${CRD_PATH}/gadgets.gone.example.com`)).status === 404 ? true : undefined));
    await until('the resource unserved', async () => ((await s.admin.request('GET', path)).status === 404 ? true : undefined));
    const apis = (await s.admin.request('GET', '/apis')).json as Json;
    assert.ok(!apis.groups.some((g: Json) => g.name === 'gone.example.com'));
    await until('its APIService gone', async () =>
      (await s.admin.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.gone.example.com')).status === 404 ? true : undefined,
    );
  });

  it('authorizes the new resources by RBAC at once, with no restart', async () => {
    const as = { 'impersonate-user': 'crd-reader' };
    const denied = await s.admin.request('GET', CT, undefined, as);
    assert.equal(denied.status, 403, denied.text);
    assert.match((denied.json as Json).message, /cannot list resource "crontabs" in API group "stable\.example\.com" in the namespace "default"/);
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'crontab-reader', namespace: 'default' },
      rules: [{ apiGroups: ['stable.example.com'], resources: ['crontabs', 'crontabs/scale'], verbs: ['get', 'list'] }],
    };
    assert.equal((await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', role)).status, 201);
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'crontab-reader', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'crontab-reader' },
      subjects: [{ kind: 'User', name: 'crd-reader', apiGroup: 'rbac.authorization.k8s.io' }],
    };
    assert.equal((await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', binding)).status, 201);
    await until('the binding in force', async () => ((await s.admin.request('GET', CT, undefined, as)).status === 200 ? true : undefined));
    const write = await s.admin.request('POST', CT, crontab('nope', { image: 'x' }), as);
    assert.equal(write.status, 403, write.text);
  });

  it('refuses creates while its CRD is terminating, and serves the rest until the objects are gone', async () => {
    const crd = crontabCrd({ group: 'held.example.com', plural: 'holds', kind: 'Hold', shortNames: [] });
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    const path = '/apis/held.example.com/v1/namespaces/default/holds';
    await waitEstablished(s, 'holds.held.example.com', path);
    const held = { ...crontab('held', { image: 'h' }, 'held.example.com', 'Hold'), metadata: { name: 'held', finalizers: ['example.com/hold'] } };
    assert.equal((await s.admin.request('POST', path, held)).status, 201);
    assert.equal((await s.admin.request('DELETE', `${CRD_PATH}/holds.held.example.com`)).status, 200);
    const refused = await until('creates refused', async () => {
      const r = await s.admin.request('POST', path, crontab('late', { image: 'l' }, 'held.example.com', 'Hold'));
      return r.status === 405 ? r : undefined;
    });
    assert.equal((refused.json as Json).message, 'create is not supported on resources of kind "holds.held.example.com"');
    const pending = await until('the held object marked for deletion', async () => {
      const r = await s.admin.request('GET', `${path}/held`);
      return (r.json as Json)?.metadata?.deletionTimestamp ? (r.json as Json) : undefined;
    });
    const crdNow = (await s.admin.request('GET', `${CRD_PATH}/holds.held.example.com`)).json as Json;
    assert.equal(crdNow.status.conditions.find((c: Json) => c.type === 'Terminating')?.reason, 'InstanceDeletionInProgress');
    pending.metadata.finalizers = [];
    assert.equal((await s.admin.request('PUT', `${path}/held`, pending)).status, 200);
    await until('the CRD gone', async () => ((await s.admin.request('GET', `${CRD_PATH}/holds.held.example.com`)).status === 404 ? true : undefined));
  });

  it('removes namespaced custom resources with their namespace', async () => {
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { metadata: { name: 'crns' } })).status, 201);
    const path = '/apis/stable.example.com/v1/namespaces/crns/crontabs';
    assert.equal((await s.admin.request('POST', path, crontab('x', { image: 'x' }))).status, 201);
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/crns')).status, 200);
    await until('the namespace gone', async () => ((await s.admin.request('GET', '/api/v1/namespaces/crns')).status === 404 ? true : undefined));
    const all = (await s.admin.request('GET', '/apis/stable.example.com/v1/crontabs')).json as Json;
    assert.ok(!all.items.some((i: Json) => i.metadata.namespace === 'crns'));
  });
});

describe(
  'custom resources on the file store across a restart',
  { skip: process.env['GATEHOUSE_TEST_STORAGE'] === 'redis' ? 'the file store is what this test is about' : false },
  () => {
    it('serves the stored CRD and its objects from the first request after a restart', async () => {
      const { mkdtemp, rm } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-crd-'));
      try {
        const flags = ['--storage-backend', 'file'];
        const first = await startTestServer({ flags, dataDir });
        assert.equal((await first.admin.request('POST', CRD_PATH, crontabCrd())).status, 201);
        await waitEstablished(first, 'crontabs.stable.example.com', CT);
        assert.equal((await first.admin.request('POST', CT, crontab('kept', { image: 'k' }))).status, 201);
        await first.close();
        const second = await startTestServer({ flags, dataDir });
        try {
          const r = await second.admin.request('GET', `${CT}/kept`);
          assert.equal(r.status, 200, r.text);
          assert.equal((r.json as Json).spec.image, 'k');
        } finally {
          await second.close();
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  },
);

describe('garbage collection between built-ins and custom resources', () => {
  let s: TestServer;
  const GC = '/apis/gc.example.com/v1/namespaces/default/gadgets';
  before(async () => {
    s = await startTestServer();
    const crd = crontabCrd({ group: 'gc.example.com', plural: 'gadgets', kind: 'Gadget', shortNames: [] });
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    await waitEstablished(s, 'gadgets.gc.example.com', GC);
  });
  after(async () => {
    await s.close();
  });

  it('collects a custom resource whose ConfigMap owner is deleted, and a ConfigMap whose custom resource owner is', async () => {
    const owner = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'gc-owner' } });
    assert.equal(owner.status, 201);
    const ref = (o: Json, kind: string, apiVersion: string) => [{ apiVersion, kind, name: o.metadata.name, uid: o.metadata.uid }];
    const dep = await s.admin.request('POST', GC, {
      ...crontab('gc-dep', { image: 'x' }, 'gc.example.com', 'Gadget'),
      metadata: { name: 'gc-dep', ownerReferences: ref(owner.json as Json, 'ConfigMap', 'v1') },
    });
    assert.equal(dep.status, 201, dep.text);
    const cm = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'gc-cm', ownerReferences: ref(dep.json as Json, 'Gadget', 'gc.example.com/v1') },
    });
    assert.equal(cm.status, 201, cm.text);
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/default/configmaps/gc-owner')).status, 200);
    await until('the custom resource collected', async () => ((await s.admin.request('GET', `${GC}/gc-dep`)).status === 404 ? true : undefined));
    await until('its ConfigMap collected', async () =>
      (await s.admin.request('GET', '/api/v1/namespaces/default/configmaps/gc-cm')).status === 404 ? true : undefined,
    );
  });
});

describe('a CRD with two served versions (conversion None)', () => {
  let s: TestServer;
  const base = (v: string) => `/apis/multi.example.com/${v}/namespaces/default/things`;
  before(async () => {
    s = await startTestServer();
    const crd = crontabCrd({ group: 'multi.example.com', plural: 'things', kind: 'Thing', shortNames: [] }) as Json;
    const v1 = crd.spec.versions[0];
    crd.spec.versions = [{ ...structuredClone(v1), name: 'v1beta1', storage: false }, v1];
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    await waitEstablished(s, 'things.multi.example.com', base('v1beta1'));
  });
  after(async () => {
    await s.close();
  });

  it('prefers the GA version in discovery and serves one object through both versions with its own apiVersion', async () => {
    const g = (await s.admin.request('GET', '/apis/multi.example.com')).json as Json;
    assert.deepEqual(
      g.versions.map((v: Json) => v.version),
      ['v1', 'v1beta1'],
    );
    assert.equal(g.preferredVersion.version, 'v1');
    const c = await s.admin.request('POST', base('v1beta1'), {
      apiVersion: 'multi.example.com/v1beta1',
      kind: 'Thing',
      metadata: { name: 't' },
      spec: { image: 'a' },
    });
    assert.equal(c.status, 201, c.text);
    assert.equal((c.json as Json).apiVersion, 'multi.example.com/v1beta1');
    const v1 = (await s.admin.request('GET', `${base('v1')}/t`)).json as Json;
    assert.equal(v1.apiVersion, 'multi.example.com/v1');
    assert.equal(v1.spec.image, 'a');
    const list = (await s.admin.request('GET', base('v1'))).json as Json;
    assert.deepEqual(
      list.items.map((i: Json) => i.apiVersion),
      ['multi.example.com/v1'],
    );
    const p = await s.admin.request('PATCH', `${base('v1')}/t`, { spec: { image: 'b' } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(p.status, 200, p.text);
    assert.equal((p.json as Json).apiVersion, 'multi.example.com/v1');
    assert.equal((p.json as Json).metadata.generation, 2);
    const back = (await s.admin.request('GET', `${base('v1beta1')}/t`)).json as Json;
    assert.equal(back.apiVersion, 'multi.example.com/v1beta1');
    assert.equal(back.spec.image, 'b');
    const crd = (await s.admin.request('GET', `${CRD_PATH}/things.multi.example.com`)).json as Json;
    assert.deepEqual(crd.status.storedVersions, ['v1']);
  });
});

describe('a CRD with conversion strategy Webhook whose webhook is down', () => {
  let s: TestServer;
  const base = (v: string) => `/apis/hook.example.com/${v}/namespaces/default/things`;
  before(async () => {
    s = await startTestServer();
    const crd = crontabCrd({ group: 'hook.example.com', plural: 'things', kind: 'Thing', shortNames: [] }) as Json;
    const v1 = crd.spec.versions[0];
    crd.spec.versions = [{ ...structuredClone(v1), name: 'v1beta1', storage: false }, v1];
    crd.spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:9/convert' } } };
    const r = await s.admin.request('POST', CRD_PATH, crd);
    assert.equal(r.status, 201, r.text);
    await waitEstablished(s, 'things.hook.example.com', base('v1'));
  });
  after(async () => {
    await s.close();
  });

  it('serves the storage version, and fails conversions with a 500 naming the webhook, never converting silently', async () => {
    assert.equal(
      (await s.admin.request('POST', base('v1'), { apiVersion: 'hook.example.com/v1', kind: 'Thing', metadata: { name: 't' }, spec: { image: 'a' } })).status,
      201,
    );
    assert.equal((await s.admin.request('GET', `${base('v1')}/t`)).status, 200);
    const read = await s.admin.request('GET', `${base('v1beta1')}/t`);
    assert.equal(read.status, 500, read.text);
    assert.match((read.json as Json).message, /^conversion webhook for hook\.example\.com\/v1, Kind=Thing failed: Post "https:\/\/127\.0\.0\.1:9\/convert": /);
    const write = await s.admin.request('POST', base('v1beta1'), {
      apiVersion: 'hook.example.com/v1beta1',
      kind: 'Thing',
      metadata: { name: 'u' },
      spec: { image: 'b' },
    });
    assert.equal(write.status, 500, write.text);
    assert.equal((await s.admin.request('GET', `${base('v1')}/u`)).status, 404, 'nothing stored half-way');
    const hashes = await Promise.all(
      ['v1', 'v1beta1'].map(
        async (v) =>
          ((await s.admin.request('GET', `/apis/hook.example.com/${v}`)).json as Json).resources.find((x: Json) => x.name === 'things').storageVersionHash,
      ),
    );
    assert.equal(hashes[0], hashes[1], 'both versions name the one storage version');
  });
});
