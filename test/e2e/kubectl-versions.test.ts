// Issue 21, items 2 and 6, with every installed kubectl from 1.27 to 1.33
// against one real `gatehouse serve`: server-side apply (1.27 reads
// /openapi/v2 in protobuf for it), explain, client-side apply of a `kind:
// List` backup (validated against the served OpenAPI first), and kubectl's
// own message for a kind no backend serves.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kubectl, findKubectl, startGatehouse, stopAll, type Gatehouse } from './helpers.js';

const VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'];
const installed = VERSIONS.map((v) => [v, findKubectl(v)] as const).filter((e): e is readonly [string, string] => e[1] !== undefined);
after(stopAll);

const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data });

const DEPLOYMENT = JSON.stringify({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
});

describe('kubectl 1.27–1.33 against one gatehouse serve', { concurrency: 3, skip: installed.length > 0 ? false : 'no kubectl.1.27 … kubectl.1.33 installed' }, () => {
  let gh: Gatehouse;
  before(async () => { gh = await startGatehouse(); });

  for (const [version, binary] of installed) {
    describe(`kubectl ${version}`, () => {
      const tag = version.replace('.', '-');
      let k: Kubectl;
      before(() => { k = new Kubectl(binary, gh.kubeconfig); });

      it('apply --server-side creates a ConfigMap', async () => {
        const out = await k.ok(['apply', '--server-side', '-f', '-'], JSON.stringify(configMap(`ssa-${tag}`, { a: '1' })));
        assert.match(out, new RegExp(`configmap/ssa-${tag} serverside-applied`));
        const got = await gh.admin.request('GET', `/api/v1/namespaces/default/configmaps/ssa-${tag}`);
        assert.equal(got.json.metadata.managedFields[0].operation, 'Apply');
      });

      it('explain configmap.data describes the field', async () => {
        const out = await k.ok(['explain', 'configmap.data']);
        assert.match(out, /KIND:\s+ConfigMap/);
        assert.match(out, /FIELD:\s+data\s+<map\[string\]string>/);
        assert.match(out, /Data contains the configuration data/);
      });

      it('apply -f of a kind: List applies each item', async () => {
        const list = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [configMap(`one-${tag}`, { n: '1' }), configMap(`two-${tag}`, { n: '2' })] };
        const out = await k.ok(['apply', '-f', '-'], JSON.stringify(list));
        assert.match(out, new RegExp(`configmap/one-${tag} created`));
        assert.match(out, new RegExp(`configmap/two-${tag} created`));
        for (const name of [`one-${tag}`, `two-${tag}`]) {
          assert.equal((await gh.admin.request('GET', `/api/v1/namespaces/default/configmaps/${name}`)).status, 200);
        }
      });

      it('apply -f of a Deployment fails with kubectl\'s own "no matches for kind"', async () => {
        const r = await k.run(['apply', '-f', '-'], DEPLOYMENT);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /no matches for kind "Deployment" in version "apps\/v1"/);
        assert.doesNotMatch(r.stderr, /error validating data|content type that the client supports/);
      });
    });
  }
});
