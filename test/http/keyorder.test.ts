// Objects written in kube's key order, whatever order the client sent: a
// built-in kind as kube-apiserver's Go struct encodes it (kind, apiVersion,
// metadata in ObjectMeta's order, spec and status in their types' order), maps
// sorted; a custom resource sorted at every level, as kube writes unstructured
// JSON. Served unchanged by GET, list and watch, on the file store and on
// Redis (GATEHOUSE_TEST_STORAGE=redis).
//
// Where the expected text comes from: the Service and Deployment spec/status
// texts are kube-apiserver's own answers found verbatim (a kind cluster's
// Service list in a project's test fixture; `kubectl create -v9` of a
// Deployment printing the 201 body), except that the Deployment's template has
// no `"creationTimestamp":null` (the mirrored ObjectMeta has `omitzero`). The
// Pod's and the metadata orders are derived from the Go types (k8s.io/api,
// apimachinery at the tables' commits) and match those answers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontabCrd, waitEstablished } from '../crd/fixtures.js';

const NS = '/api/v1/namespaces/ko';
const UA = { 'user-agent': 'kubectl-create/v1.33.0 (linux/amd64) kubernetes/0000000' };

/** The text with the values the server chooses (uid, revision, times) replaced by names. */
function stable(text: string): string {
  return text
    .replace(/"uid":"[0-9a-f-]{36}"/g, '"uid":"UID"')
    .replace(/"resourceVersion":"\d+"/g, '"resourceVersion":"RV"')
    .replace(/"(creationTimestamp|time)":"[0-9T:Z-]+"/g, '"$1":"TIME"');
}

describe("kube's key order in stored objects", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ko' } })).status, 201);
  });
  after(async () => {
    await s.close();
  });

  it('writes a Service sent in any order as kube does, and serves those bytes on GET and in lists', async () => {
    // kube's answer for this Service, reversed member by member.
    const body =
      '{"status":{"loadBalancer":{}},"spec":{"internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"],"sessionAffinity":"None","externalIPs":["1.2.3.42"],' +
      '"type":"ClusterIP","clusterIPs":["10.98.247.229"],"clusterIP":"10.98.247.229","selector":{"app":"nginx-cl"},"ports":[{"targetPort":80,"port":80,"protocol":"TCP","name":"http"}]},' +
      '"metadata":{"namespace":"ko","name":"nginx-svc-cl"},"apiVersion":"v1","kind":"Service"}';
    const made = await s.admin.request('POST', `${NS}/services`, body, UA);
    assert.equal(made.status, 201, made.text);
    const want =
      '{"kind":"Service","apiVersion":"v1","metadata":{"name":"nginx-svc-cl","namespace":"ko","uid":"UID","resourceVersion":"RV","creationTimestamp":"TIME",' +
      '"managedFields":[{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"TIME","fieldsType":"FieldsV1","fieldsV1":' +
      '{"f:spec":{"f:clusterIP":{},"f:clusterIPs":{},"f:externalIPs":{},"f:internalTrafficPolicy":{},"f:ipFamilies":{},"f:ipFamilyPolicy":{},' +
      '"f:ports":{".":{},"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},"f:selector":{},"f:sessionAffinity":{},"f:type":{}}}}]},' +
      '"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":80}],"selector":{"app":"nginx-cl"},"clusterIP":"10.98.247.229","clusterIPs":["10.98.247.229"],' +
      '"type":"ClusterIP","externalIPs":["1.2.3.42"],"sessionAffinity":"None","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"},' +
      '"status":{"loadBalancer":{}}}\n';
    assert.equal(stable(made.text), want);
    const got = await s.admin.request('GET', `${NS}/services/nginx-svc-cl`);
    assert.equal(got.text, made.text);
    const list = await s.admin.request('GET', `${NS}/services`);
    assert.ok(list.text.includes(made.text.trimEnd()), list.text);
  });

  it('writes a defaulted Deployment as kube does, also for a dry run', async () => {
    const body = {
      spec: {
        template: { spec: { containers: [{ image: 'nginx', name: 'nginx' }] }, metadata: { labels: { app: 'nginx' } } },
        selector: { matchLabels: { app: 'nginx' } },
      },
      metadata: { labels: { app: 'nginx' }, name: 'nginx' },
      kind: 'Deployment',
      apiVersion: 'apps/v1',
    };
    const spec =
      '"spec":{"replicas":1,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx",' +
      '"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"Always"}],"restartPolicy":"Always",' +
      '"terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},' +
      '"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{}}\n';
    const head = (rv: string) =>
      `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"nginx","namespace":"ko","uid":"UID",${rv}"generation":1,"creationTimestamp":"TIME","labels":{"app":"nginx"},"managedFields":[{"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1","time":"TIME","fieldsType":"FieldsV1","fieldsV1":`;
    const dry = await s.admin.request('POST', '/apis/apps/v1/namespaces/ko/deployments?dryRun=All', body, UA);
    assert.equal(dry.status, 201, dry.text);
    assert.ok(stable(dry.text).startsWith(head('')), dry.text);
    assert.ok(dry.text.endsWith(`}]},${spec}`), dry.text);
    const made = await s.admin.request('POST', '/apis/apps/v1/namespaces/ko/deployments', body, UA);
    assert.equal(made.status, 201, made.text);
    assert.ok(stable(made.text).startsWith(head('"resourceVersion":"RV",')), made.text);
    assert.ok(made.text.endsWith(`}]},${spec}`), made.text);
    assert.equal((await s.admin.request('GET', '/apis/apps/v1/namespaces/ko/deployments/nginx')).text, made.text);
  });

  it('writes a Pod as kube does, and keeps the order through an update and a patch', async () => {
    const made = await s.admin.request(
      'POST',
      `${NS}/pods`,
      { spec: { containers: [{ image: 'nginx', name: 'c' }] }, metadata: { labels: { b: '2', a: '1' }, name: 'p' }, kind: 'Pod', apiVersion: 'v1' },
      UA,
    );
    assert.equal(made.status, 201, made.text);
    const spec =
      '"spec":{"containers":[{"name":"c","image":"nginx","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"Always"}],' +
      '"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler","enableServiceLinks":true},' +
      '"status":{"phase":"Pending","qosClass":"BestEffort"}}\n';
    assert.match(
      stable(made.text),
      /^\{"kind":"Pod","apiVersion":"v1","metadata":\{"name":"p","namespace":"ko","uid":"UID","resourceVersion":"RV","generation":1,"creationTimestamp":"TIME","labels":\{"a":"1","b":"2"\},"managedFields":\[\{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"TIME","fieldsType":"FieldsV1","fieldsV1":\{/,
    );
    assert.ok(made.text.endsWith(`}]},${spec}`), made.text);
    // An update sent with metadata last and the labels unsorted.
    const { kind, apiVersion, metadata, ...rest } = made.json;
    const put = await s.admin.request('PUT', `${NS}/pods/p`, { ...rest, apiVersion, kind, metadata: { ...metadata, labels: { z: '3', b: '2', a: '1' } } }, UA);
    assert.equal(put.status, 200, put.text);
    assert.match(stable(put.text), /"creationTimestamp":"TIME","labels":\{"a":"1","b":"2","z":"3"\},"managedFields":/);
    assert.ok(put.text.startsWith('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p",'), put.text);
    assert.ok(put.text.endsWith(`}]},${spec}`), put.text);
    const patched = await s.admin.request(
      'PATCH',
      `${NS}/pods/p`,
      { metadata: { annotations: { y: '1', x: '2' } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(patched.status, 200, patched.text);
    assert.match(patched.text, /"labels":\{"a":"1","b":"2","z":"3"\},"annotations":\{"x":"2","y":"1"\},"managedFields":/);
  });

  it('sorts the keys of a ConfigMap sent unsorted, a __proto__ key kept as data', async () => {
    const body = '{"kind":"ConfigMap","apiVersion":"v1","data":{"b":"1","__proto__":"p","a":"2","A":"3"},"metadata":{"labels":{"z":"1","a":"2"},"name":"cm"}}';
    const made = await s.admin.request('POST', `${NS}/configmaps`, body);
    assert.equal(made.status, 201, made.text);
    assert.match(
      made.text,
      /^\{"kind":"ConfigMap","apiVersion":"v1","metadata":\{"name":"cm","namespace":"ko","uid":"[^"]+","resourceVersion":"\d+","creationTimestamp":"[^"]+","labels":\{"a":"2","z":"1"\},"managedFields":/,
    );
    assert.ok(made.text.endsWith('},"data":{"A":"3","__proto__":"p","a":"2","b":"1"}}\n'), made.text);
    const got = await s.admin.request('GET', `${NS}/configmaps/cm`);
    assert.equal(got.text, made.text);
  });

  it('writes a custom resource with every key sorted, as kube writes unstructured objects', async () => {
    const ct = '/apis/stable.example.com/v1/namespaces/ko/crontabs';
    assert.equal((await s.admin.request('POST', CRD_PATH, crontabCrd())).status, 201);
    await waitEstablished(s, 'crontabs.stable.example.com', ct);
    const body =
      '{"spec":{"replicas":2,"image":"x","cronSpec":"* * * * *"},"metadata":{"labels":{"z":"1","a":"2"},"name":"c1"},"kind":"CronTab","apiVersion":"stable.example.com/v1"}';
    const made = await s.admin.request('POST', ct, body, UA);
    assert.equal(made.status, 201, made.text);
    assert.equal(
      stable(made.text),
      '{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"creationTimestamp":"TIME","generation":1,"labels":{"a":"2","z":"1"},' +
        '"managedFields":[{"apiVersion":"stable.example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:a":{},"f:z":{}}},' +
        '"f:spec":{"f:cronSpec":{},"f:image":{},"f:replicas":{}}},"manager":"kubectl-create","operation":"Update","time":"TIME"}],' +
        '"name":"c1","namespace":"ko","resourceVersion":"RV","uid":"UID"},"spec":{"cronSpec":"* * * * *","image":"x","replicas":2}}\n',
    );
    assert.equal((await s.admin.request('GET', `${ct}/c1`)).text, made.text);
    // The list too is unstructured: its keys sorted around the items.
    const list = await s.admin.request('GET', ct);
    assert.equal(list.status, 200, list.text);
    assert.equal(
      stable(list.text),
      `{"apiVersion":"stable.example.com/v1","items":[${stable(made.text).trimEnd()}],"kind":"CronTabList","metadata":{"resourceVersion":"RV"}}\n`,
    );
    assert.equal((await s.admin.request('POST', ct, body.replace('"c1"', '"c2"'))).status, 201);
    const page = await s.admin.request('GET', `/apis/stable.example.com/v1/crontabs?limit=1`);
    assert.match(page.text, /\],"kind":"CronTabList","metadata":\{"continue":"[^"]+","remainingItemCount":1,"resourceVersion":"\d+"\}\}\n$/);
  });
});
