// apps/v1 through kubectl against a started server: `kubectl create
// deployment`, kube's defaults on what it stored, `kubectl scale` through the
// scale subresource, `kubectl get` columns, the three patch types, server-side
// apply, status only through /status, and delete. Nothing rolls out: the
// status stays what clients wrote.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';

describe('apps/v1 with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('creates a deployment with kube defaults', async () => {
    const out = await ctx.k.ok(['create', 'deployment', 'web', '--image=nginx', '--port=80']);
    assert.match(out, /deployment.apps\/web created/);
    const d = (await ctx.s.admin.request('GET', `${DEPLOY}/web`)).json;
    assert.equal(d.metadata.generation, 1);
    assert.deepEqual(d.status, {});
    assert.equal(d.spec.replicas, 1);
    assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.equal(d.spec.progressDeadlineSeconds, 600);
    const pod = d.spec.template.spec;
    assert.equal(pod.restartPolicy, 'Always');
    assert.equal(pod.dnsPolicy, 'ClusterFirst');
    assert.equal(pod.terminationGracePeriodSeconds, 30);
    assert.equal(pod.schedulerName, 'default-scheduler');
    assert.deepEqual(pod.securityContext, {});
    assert.deepEqual(pod.containers[0], {
      name: 'nginx',
      image: 'nginx',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      resources: {},
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      imagePullPolicy: 'Always',
    });
  });

  it('shows kubectl get columns', async () => {
    const out = await ctx.k.ok(['get', 'deploy', 'web']);
    const [head, row] = out.trim().split('\n');
    assert.deepEqual(head!.split(/\s+/), ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
    assert.deepEqual(row!.split(/\s+/).slice(0, 4), ['web', '0/1', '0', '0']);
    const wide = await ctx.k.ok(['get', 'deploy', 'web', '-o', 'wide', '--no-headers']);
    assert.deepEqual(wide.trim().split(/\s+/).slice(5), ['nginx', 'nginx', 'app=web']);
  });

  it('scales through the scale subresource', async () => {
    assert.match(await ctx.k.ok(['scale', 'deployment', 'web', '--replicas=3']), /deployment.apps\/web scaled/);
    const d = (await ctx.s.admin.request('GET', `${DEPLOY}/web`)).json;
    assert.equal(d.spec.replicas, 3);
    assert.equal(d.metadata.generation, 2);
    const scale = await ctx.s.admin.request('GET', `${DEPLOY}/web/scale`);
    assert.equal(scale.status, 200, scale.text);
    assert.equal(scale.json.kind, 'Scale');
    assert.equal(scale.json.apiVersion, 'autoscaling/v1');
    assert.deepEqual(scale.json.spec, { replicas: 3 });
    assert.deepEqual(scale.json.status, { replicas: 0, selector: 'app=web' });
  });

  it('writes status only through /status, and the spec not through it', async () => {
    const st = await ctx.s.admin.request(
      'PATCH',
      `${DEPLOY}/web/status`,
      { status: { replicas: 3, readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 }, spec: { replicas: 9 } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    assert.equal(st.status, 200, st.text);
    assert.equal(st.json.spec.replicas, 3);
    assert.equal(st.json.metadata.generation, 2);
    const main = await ctx.s.admin.request('PATCH', `${DEPLOY}/web`, { status: { replicas: 0 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(main.json.status.replicas, 3);
    const [, row] = (await ctx.k.ok(['get', 'deploy', 'web'])).trim().split('\n');
    assert.deepEqual(row!.split(/\s+/).slice(0, 4), ['web', '2/3', '3', '2']);
  });

  it('patches with all three patch types and bumps the generation on spec changes only', async () => {
    await ctx.k.ok([
      'patch',
      'deploy',
      'web',
      '--type=strategic',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}',
    ]);
    let d = (await ctx.s.admin.request('GET', `${DEPLOY}/web`)).json;
    assert.equal(d.spec.template.spec.containers.length, 1);
    assert.equal(d.spec.template.spec.containers[0].image, 'nginx:1.27');
    // A tag other than latest defaults imagePullPolicy only when absent: the stored Always stays.
    assert.equal(d.spec.template.spec.containers[0].imagePullPolicy, 'Always');
    assert.equal(d.metadata.generation, 3);
    await ctx.k.ok(['patch', 'deploy', 'web', '--type=merge', '-p', '{"metadata":{"labels":{"tier":"front"}}}']);
    d = (await ctx.s.admin.request('GET', `${DEPLOY}/web`)).json;
    assert.equal(d.metadata.generation, 3);
    await ctx.k.ok(['patch', 'deploy', 'web', '--type=json', '-p', '[{"op":"add","path":"/spec/minReadySeconds","value":5}]']);
    d = (await ctx.s.admin.request('GET', `${DEPLOY}/web`)).json;
    assert.equal(d.spec.minReadySeconds, 5);
    assert.equal(d.metadata.generation, 4);
  });

  it('refuses a selector change and a template that does not match the selector with kube messages', async () => {
    const r = await ctx.k.run(['patch', 'deploy', 'web', '--type=merge', '-p', '{"spec":{"selector":{"matchLabels":{"app":"other"}}}}']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /The Deployment "web" is invalid: \n\* spec.template.metadata.labels: Invalid value: map\[string\]string\{"app":"web"\}: `selector` does not match template `labels`\n\* spec.selector: Invalid value: v1.LabelSelector\{MatchLabels:map\[string\]string\{"app":"other"\}, MatchExpressions:\[\]v1.LabelSelectorRequirement\(nil\)\}: field is immutable/,
    );
    const bad = await ctx.s.admin.request('POST', DEPLOY, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bad' },
      spec: {
        selector: { matchLabels: { app: 'a' } },
        template: { metadata: { labels: { app: 'b' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(bad.json.details.causes, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.template.metadata.labels',
        message: 'Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`',
      },
    ]);
    const none = await ctx.s.admin.request('POST', DEPLOY, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bad' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    assert.equal(none.status, 422);
    // Without a selector kube checks the template no further.
    assert.deepEqual(
      none.json.details.causes.map((c: { field: string }) => c.field),
      ['spec.selector'],
    );
    const never = await ctx.s.admin.request('POST', DEPLOY, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bad' },
      spec: {
        replicas: -1,
        selector: { matchLabels: { app: 'a' } },
        template: { metadata: { labels: { app: 'a' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    assert.equal(never.status, 422);
    assert.deepEqual(never.json.details.causes, [
      { reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'Invalid value: -1: must be greater than or equal to 0' },
      { reason: 'FieldValueNotSupported', field: 'spec.template.spec.restartPolicy', message: 'Unsupported value: "Never": supported values: "Always"' },
    ]);
  });

  it('applies server-side and client-side without a diff the second time', async () => {
    const manifest = [
      'apiVersion: apps/v1',
      'kind: StatefulSet',
      'metadata: {name: db}',
      'spec:',
      '  serviceName: db',
      '  replicas: 2',
      '  selector: {matchLabels: {app: db}}',
      '  template:',
      '    metadata: {labels: {app: db}}',
      '    spec: {containers: [{name: db, image: "postgres:16"}]}',
      '---',
      'apiVersion: apps/v1',
      'kind: DaemonSet',
      'metadata: {name: agent}',
      'spec:',
      '  selector: {matchLabels: {app: agent}}',
      '  template:',
      '    metadata: {labels: {app: agent}}',
      '    spec: {nodeSelector: {disk: ssd}, containers: [{name: agent, image: "fluentd"}]}',
      '---',
      'apiVersion: apps/v1',
      'kind: ReplicaSet',
      'metadata: {name: front}',
      'spec:',
      '  replicas: 2',
      '  selector: {matchExpressions: [{key: app, operator: In, values: [front, web]}]}',
      '  template:',
      '    metadata: {labels: {app: front}}',
      '    spec: {containers: [{name: c, image: "nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000"}]}',
      '',
    ].join('\n');
    assert.match(await ctx.k.ok(['apply', '--server-side', '-f', '-'], manifest), /statefulset.apps\/db serverside-applied/);
    assert.match(await ctx.k.ok(['apply', '--server-side', '-f', '-'], manifest), /statefulset.apps\/db serverside-applied/);
    const diff = await ctx.k.run(['diff', '--server-side', '-f', '-'], manifest);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    const sts = (await ctx.s.admin.request('GET', '/apis/apps/v1/namespaces/default/statefulsets/db')).json;
    assert.equal(sts.metadata.generation, 1);
    assert.equal(sts.spec.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(sts.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.deepEqual(sts.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
    assert.equal(sts.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    const ds = (await ctx.s.admin.request('GET', '/apis/apps/v1/namespaces/default/daemonsets/agent')).json;
    assert.deepEqual(ds.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    assert.equal(ds.metadata.annotations['deprecated.daemonset.template.generation'], '1');
    const rs = (await ctx.s.admin.request('GET', '/apis/apps/v1/namespaces/default/replicasets/front')).json;
    assert.equal(rs.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');

    // Client-side apply of the same objects, twice: the second is unchanged.
    const csa = manifest
      .replace(/name: db\}/, 'name: db2}')
      .replace(/name: agent\}/, 'name: agent2}')
      .replace(/name: front\}/, 'name: front2}');
    await ctx.k.ok(['apply', '-f', '-'], csa);
    const again = await ctx.k.ok(['apply', '-f', '-'], csa);
    assert.match(again, /statefulset.apps\/db2 unchanged/);
    assert.match(again, /daemonset.apps\/agent2 unchanged/);
    assert.match(again, /replicaset.apps\/front2 unchanged/);
  });

  it('lists every workload kind with kubectl get columns and scales the others', async () => {
    await ctx.k.ok(['scale', 'sts', 'db', '--replicas=4']);
    await ctx.k.ok(['scale', 'rs', 'front', '--replicas=0']);
    const out = await ctx.k.ok(['get', 'deploy,rs,sts,ds', '-o', 'wide']);
    const lines = out.split('\n');
    const header = (prefix: string) => lines[lines.findIndex((l) => l.includes(prefix)) - 1]!.trim().split(/\s{2,}/);
    assert.deepEqual(header('deployment.apps/web'), ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    assert.deepEqual(header('replicaset.apps/front '), ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    assert.deepEqual(header('statefulset.apps/db '), ['NAME', 'READY', 'AGE', 'CONTAINERS', 'IMAGES']);
    assert.deepEqual(header('daemonset.apps/agent '), [
      'NAME',
      'DESIRED',
      'CURRENT',
      'READY',
      'UP-TO-DATE',
      'AVAILABLE',
      'NODE SELECTOR',
      'AGE',
      'CONTAINERS',
      'IMAGES',
      'SELECTOR',
    ]);
    const row = (name: string) => lines.find((l) => l.startsWith(`${name} `))!.split(/\s+/);
    assert.deepEqual(row('replicaset.apps/front').slice(0, 4), ['replicaset.apps/front', '0', '0', '0']);
    assert.equal(row('replicaset.apps/front').at(-3), 'app');
    assert.match(
      lines.find((l) => l.startsWith('replicaset.apps/front '))!,
      /app in \(front,web\)$/,
    );
    assert.deepEqual(row('statefulset.apps/db').slice(0, 2), ['statefulset.apps/db', '0/4']);
    assert.deepEqual(row('daemonset.apps/agent').slice(0, 7), ['daemonset.apps/agent', '0', '0', '0', '0', '0', 'disk=ssd']);
    const scale = await ctx.s.admin.request('GET', '/apis/apps/v1/namespaces/default/replicasets/front/scale');
    assert.deepEqual(scale.json.status, { replicas: 0, selector: 'app in (front,web)' });
  });

  it('deletes a deployment', async () => {
    assert.match(await ctx.k.ok(['delete', 'deploy', 'web']), /deployment.apps "web" deleted/);
    assert.equal((await ctx.s.admin.request('GET', `${DEPLOY}/web`)).status, 404);
  });
});
