// A CustomResourceDefinition version marked `deprecated: true` is answered as
// kube's CRD handler answers it: every request through it gets a `Warning: 299`
// (the version's deprecationWarning, else kube's default text naming the most
// preferred served version above it), the audit annotation
// `k8s.io/deprecated: "true"` (no removed release: a CRD has none), and the
// `apiserver_requested_deprecated_apis` gauge; kubectl shows the warning.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findKubectl, Kubectl, stopAll } from '../e2e/helpers.js';
import { completeLines } from '../helpers/auditlog.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from './fixtures.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const GROUP = 'stable.example.com';
const path = (v: string) => `/apis/${GROUP}/${v}/namespaces/default/crontabs`;
const binary = findKubectl();

/** The CronTab CRD served in v1alpha1 (deprecated, default text), v1beta1 (deprecated, its own text), v1 (storage) and v2 (deprecated, nothing above it). */
function deprecatedCrd(): Json {
  const crd = crontabCrd() as Json;
  const v1 = crd.spec.versions[0] as Json;
  const version = (name: string, extra: Json) => ({ ...v1, name, storage: false, ...extra });
  crd.spec.versions = [
    version('v1alpha1', { deprecated: true }),
    version('v1beta1', { deprecated: true, deprecationWarning: 'v1beta1 CronTabs go away next quarter' }),
    v1,
    version('v2', { deprecated: true }),
  ];
  return crd;
}

const warnings = (r: { headers: Record<string, unknown> }) => (r.headers['warning'] === undefined ? [] : String(r.headers['warning']).split(/, (?=299 )/));

describe('deprecated custom resource versions', () => {
  let s: TestServer;
  let dir: string;
  let logFile: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-crd-deprecated-'));
    logFile = join(dir, 'audit.log');
    await writeFile(
      join(dir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: stable.example.com}]\n',
    );
    s = await startTestServer({ flags: [`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${logFile}`] });
    const c = await s.admin.request('POST', CRD_PATH, deprecatedCrd());
    assert.equal(c.status, 201, c.text);
    await waitEstablished(s, `crontabs.${GROUP}`, path('v1'));
    assert.equal((await s.admin.request('POST', path('v1'), crontab('nightly', { cronSpec: '0 0 * * *' }))).status, 201);
  });
  after(async () => {
    await stopAll();
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("warns with kube's default text, or the version's own, on every verb; the storage version is not warned about", async () => {
    const byDefault = `299 - "${GROUP}/v1alpha1 CronTab is deprecated; use ${GROUP}/v1 CronTab"`;
    assert.deepEqual(warnings(await s.admin.request('GET', path('v1alpha1'))), [byDefault]);
    assert.deepEqual(warnings(await s.admin.request('GET', `${path('v1alpha1')}/nightly`)), [byDefault]);
    const created = await s.admin.request('POST', path('v1alpha1'), { ...crontab('hourly', {}), apiVersion: `${GROUP}/v1alpha1` });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(warnings(created), [byDefault]);
    assert.deepEqual(warnings(await s.admin.request('GET', path('v1beta1'))), ['299 - "v1beta1 CronTabs go away next quarter"']);
    // Nothing served and undeprecated ranks above v2: the text names no replacement.
    assert.deepEqual(warnings(await s.admin.request('GET', path('v2'))), [`299 - "${GROUP}/v2 CronTab is deprecated"`]);
    assert.deepEqual(warnings(await s.admin.request('GET', path('v1'))), []);
  });

  it('records k8s.io/deprecated in the audit event and sets apiserver_requested_deprecated_apis', async () => {
    const r = await s.admin.request('GET', `${path('v1beta1')}/nightly`);
    assert.equal(r.status, 200, r.text);
    const id = String(r.headers['audit-id']);
    const ev = await eventually('the audit event', async () =>
      (await completeLines(logFile)).map((l) => JSON.parse(l) as Json).find((e) => e['auditID'] === id && e['stage'] === 'ResponseComplete'),
    );
    assert.equal(ev['annotations']['k8s.io/deprecated'], 'true');
    assert.equal(ev['annotations']['k8s.io/removed-release'], undefined);
    const plain = await s.admin.request('GET', `${path('v1')}/nightly`);
    const pe = await eventually('the audit event', async () =>
      (await completeLines(logFile))
        .map((l) => JSON.parse(l) as Json)
        .find((e) => e['auditID'] === String(plain.headers['audit-id']) && e['stage'] === 'ResponseComplete'),
    );
    assert.equal(pe['annotations']?.['k8s.io/deprecated'], undefined);
    const metrics = (await s.admin.request('GET', '/metrics')).text;
    assert.match(
      metrics,
      new RegExp(
        `^apiserver_requested_deprecated_apis\\{group="${GROUP.replace(/\./g, '\\.')}",version="v1beta1",resource="crontabs",subresource="",removed_release=""\\} 1$`,
        'm',
      ),
    );
    assert.doesNotMatch(metrics, /apiserver_requested_deprecated_apis\{[^}]*version="v1",/);
  });

  it('kubectl get through a deprecated version prints the warning', { skip: binary ? false : 'kubectl is not installed' }, async () => {
    const k = new Kubectl(binary!, s.kubeconfig);
    const r = await k.run(['get', `crontabs.v1alpha1.${GROUP}`, '-n', 'default']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^nightly\s/m);
    assert.match(
      r.stderr,
      new RegExp(`^Warning: ${GROUP.replace(/\./g, '\\.')}/v1alpha1 CronTab is deprecated; use ${GROUP.replace(/\./g, '\\.')}/v1 CronTab$`, 'm'),
    );
  });
});
