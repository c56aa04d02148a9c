// Pods as kube-apiserver 1.33 itself treats them, through kubectl and the
// API against a started server: what a create sets (phase, QoS class, requests
// from limits, scheduling gates), quantities that do not parse, binding,
// the requests that need a node (logs, exec, attach, port-forward,
// nodes/proxy) answered as kube answers a pod without one, ephemeral
// containers (kubectl debug) and resize.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };

function pod(name: string, containers: object[], extra: object = {}): object {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } }, spec: { containers, ...extra } };
}
const c = (name: string, resources?: object) => ({ name, image: 'nginx:1.27', ...(resources ? { resources } : {}) });

describe('pods as kube-apiserver sets and serves them', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  const create = async (body: object) => {
    const r = await ctx.s.admin.request('POST', `${NS}/pods`, body);
    assert.equal(r.status, 201, r.text);
    return r.json;
  };

  it('creates a pod Pending with its QoS class, requests taken from limits', async () => {
    const guaranteed = await create(pod('qos-g', [c('a', { limits: { cpu: '500m', memory: '128Mi' } })]));
    assert.deepEqual(guaranteed.status, { phase: 'Pending', qosClass: 'Guaranteed' });
    assert.deepEqual(guaranteed.spec.containers[0].resources.requests, { cpu: '500m', memory: '128Mi' });
    assert.equal(guaranteed.spec.enableServiceLinks, true);
    // A request equal in amount but written otherwise is still the limit.
    const same = await create(pod('qos-g2', [c('a', { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1024Mi' } })]));
    assert.equal(same.status.qosClass, 'Guaranteed');
    const burstable = await create(pod('qos-b', [c('a', { requests: { cpu: '100m' } }), c('b')]));
    assert.equal(burstable.status.qosClass, 'Burstable');
    // Only cpu and memory count; a zero request is none.
    const best = await create(pod('qos-be', [c('a', { requests: { cpu: '0', 'ephemeral-storage': '1Gi' } })]));
    assert.equal(best.status.qosClass, 'BestEffort');
    // A client's status is not kept on create.
    const told = await create({ ...pod('qos-told', [c('a')]), status: { phase: 'Running', qosClass: 'Guaranteed' } });
    assert.deepEqual(told.status, { phase: 'Pending', qosClass: 'BestEffort' });
    const out = await ctx.k.ok(['get', 'pod', 'qos-b', '-o', 'jsonpath={.status.phase}/{.status.qosClass}']);
    assert.equal(out, 'Pending/Burstable');
  });

  it('marks a pod with scheduling gates as not scheduled, and does not bind it', async () => {
    const gated = await create(pod('gated', [c('a')], { schedulingGates: [{ name: 'example.com/wait' }] }));
    assert.deepEqual(gated.status.conditions, [
      {
        type: 'PodScheduled',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime: null,
        reason: 'SchedulingGated',
        message: 'Scheduling is blocked due to non-empty scheduling gates',
      },
    ]);
    const bind = await ctx.s.admin.request('POST', `${NS}/pods/gated/binding`, { metadata: { name: 'gated' }, target: { name: 'node-1' } });
    assert.equal(bind.status, 409);
    assert.equal(bind.json.message, 'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates');
  });

  it('refuses quantities that do not parse, negative ones and requests over limits, naming the field', async () => {
    const r = await ctx.k.run(['create', '-f', '-'], JSON.stringify(pod('bad-q', [c('a', { limits: { cpu: 'lots' } })])));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.containers\[0\]\.resources\.limits\[cpu\]: Invalid value: "lots": quantities must match the regular expression/);
    const neg = await ctx.s.admin.request('POST', `${NS}/pods`, pod('bad-n', [c('a', { requests: { memory: '-1Mi' } })]));
    assert.equal(neg.status, 422);
    assert.deepEqual(neg.json.details.causes, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "-1Mi": must be greater than or equal to 0',
        field: 'spec.containers[0].resources.requests[memory]',
      },
    ]);
    const over = await ctx.s.admin.request('POST', `${NS}/pods`, pod('bad-o', [c('a', { requests: { cpu: '2' }, limits: { cpu: '1' } })]));
    assert.equal(over.status, 422);
    assert.equal(over.json.details.causes[0].field, 'spec.containers[0].resources.requests[cpu]');
    assert.equal(over.json.details.causes[0].message, 'Invalid value: "2": must be less than or equal to cpu limit of 1');
    // A pod template's quantities are checked where they are.
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bad-q' },
      spec: {
        selector: { matchLabels: { app: 'q' } },
        template: { metadata: { labels: { app: 'q' } }, spec: { initContainers: [c('i', { limits: { memory: '12 Mi' } })], containers: [c('a')] } },
      },
    };
    const d = await ctx.s.admin.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy);
    assert.equal(d.status, 422, d.text);
    assert.equal(d.json.details.causes[0].field, 'spec.template.spec.initContainers[0].resources.limits[memory]');
    assert.equal((await ctx.s.admin.request('GET', `${NS}/pods/bad-q`)).status, 404);
  });

  it('answers a Deployment of 5,000 containers whole, refuses 10,000 as etcd refuses them, and a body over the request limit with 413', async () => {
    const containers = Array.from({ length: 5_000 }, (_, i) => ({ name: `c${i}`, image: 'nginx:1.27', resources: { limits: { cpu: '10m' } } }));
    const deploy = (name: string, list: object[]) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: list } } },
    });
    const big = await ctx.s.admin.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('wide', containers));
    assert.equal(big.status, 201, big.text.slice(0, 300));
    const spec = big.json.spec.template.spec;
    assert.equal(spec.containers.length, 5_000);
    assert.deepEqual(spec.containers[4_999].resources.requests, undefined, 'templates keep their requests as written (only Pods default them)');
    // One bad quantity among them is named where it is.
    const bad = containers.map((c, i) => (i === 3_777 ? { ...c, resources: { limits: { cpu: 'ten' } } } : c));
    const refused = await ctx.s.admin.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('wide-bad', bad));
    assert.equal(refused.status, 422);
    assert.deepEqual(
      refused.json.details.causes.map((x: { field: string }) => x.field),
      ['spec.template.spec.containers[3777].resources.limits[cpu]'],
    );
    // Twice as many fit the request body (3 MiB) but not etcd's request limit (1.5 MiB) once stored as kube stores a
    // Deployment, in protobuf with its managedFields (some 2.8 MB here): kube-apiserver answers etcd's error.
    const twice = Array.from({ length: 10_000 }, (_, i) => ({ name: `c${i}`, image: 'nginx:1.27', resources: { limits: { cpu: '10m' } } }));
    const wider = await ctx.s.admin.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('wider', twice));
    assert.equal(wider.status, 500);
    assert.equal(wider.json.message, 'etcdserver: request is too large');
    assert.equal((await ctx.s.admin.request('GET', '/apis/apps/v1/namespaces/default/deployments/wider')).status, 404);
    // kube-apiserver's request limit (3 MiB): the body is not read further.
    const huge = Array.from({ length: 40_000 }, (_, i) => ({ name: `container-${i}`, image: `registry.example.com/team/image-${i}:1.0.0` }));
    const over = await ctx.s.admin.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploy('too-wide', huge));
    assert.equal(over.status, 413);
    assert.equal(over.json.message, 'Request entity too large: limit is 3145728');
    assert.equal((await ctx.s.admin.request('GET', '/apis/apps/v1/namespaces/default/deployments/too-wide')).status, 404);
  });

  it('binds a pod to a node once', async () => {
    await create(pod('bind-me', [c('a')]));
    const dry = await ctx.s.admin.request('POST', `${NS}/pods/bind-me/binding?dryRun=All`, {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'bind-me' },
      target: { name: 'node-1' },
    });
    assert.equal(dry.status, 201, dry.text);
    assert.equal((await ctx.s.admin.request('GET', `${NS}/pods/bind-me`)).json.spec.nodeName, undefined);
    const ok = await ctx.s.admin.request('POST', `${NS}/pods/bind-me/binding`, {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'bind-me', annotations: { 'scheduler.example.com/score': '7' } },
      target: { kind: 'Node', name: 'node-1' },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const bound = (await ctx.s.admin.request('GET', `${NS}/pods/bind-me`)).json;
    assert.equal(bound.spec.nodeName, 'node-1');
    assert.equal(bound.metadata.annotations['scheduler.example.com/score'], '7');
    // Written as kube's storage update: no strategy, so the generation stays.
    assert.equal(bound.metadata.generation, 1);
    assert.deepEqual(Object.keys(bound.status), ['phase', 'conditions', 'qosClass']);
    assert.deepEqual(
      bound.status.conditions.map((x: { type: string; status: string }) => [x.type, x.status]),
      [['PodScheduled', 'True']],
    );
    const again = await ctx.s.admin.request('POST', `${NS}/pods/bind-me/binding`, { metadata: { name: 'bind-me' }, target: { name: 'node-2' } });
    assert.equal(again.status, 409);
    assert.equal(again.json.message, 'Operation cannot be fulfilled on pods/binding "bind-me": pod bind-me is already assigned to node "node-1"');
    const wide = await ctx.k.ok(['get', 'pod', 'bind-me', '-o', 'wide']);
    assert.match(wide.split('\n')[1]!, /\snode-1\s/);
  });

  it('refuses a binding without a target, to another kind, or for another pod', async () => {
    await create(pod('bind-bad', [c('a')]));
    const none = await ctx.s.admin.request('POST', `${NS}/pods/bind-bad/binding`, { metadata: { name: 'bind-bad' }, target: {} });
    assert.equal(none.status, 422);
    assert.equal(none.json.details.causes[0].field, 'target.name');
    const kind = await ctx.s.admin.request('POST', `${NS}/pods/bind-bad/binding`, { metadata: { name: 'bind-bad' }, target: { kind: 'Pod', name: 'x' } });
    assert.equal(kind.status, 422);
    assert.equal(kind.json.details.causes[0].message, 'Unsupported value: "Pod": supported values: "Node", "<empty>"');
    const other = await ctx.s.admin.request('POST', `${NS}/pods/bind-bad/binding`, { metadata: { name: 'other' }, target: { name: 'n' } });
    assert.equal(other.status, 400);
    assert.equal(other.json.message, 'name in URL does not match name in Binding object');
    const missing = await ctx.s.admin.request('POST', `${NS}/pods/ghost/binding`, { metadata: { name: 'ghost' }, target: { name: 'n' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'pods "ghost" not found');
  });

  it('answers logs, exec, attach and port-forward of a pod without a node as kube does', async () => {
    await create(pod('waiting', [c('web')]));
    const logs = await ctx.k.run(['logs', 'waiting']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stdout, '');
    const raw = await ctx.s.admin.request('GET', `${NS}/pods/waiting/log`);
    assert.equal(raw.status, 204);
    const exec = await ctx.k.run(['exec', 'waiting', '--', 'ls']);
    assert.notEqual(exec.code, 0);
    assert.match(exec.stderr, /pod waiting does not have a host assigned/);
    for (const sub of ['exec?command=ls', 'attach?stdout=true', 'portforward?ports=80']) {
      const r = await ctx.s.admin.request('POST', `${NS}/pods/waiting/${sub}`);
      assert.equal(r.status, 400, sub);
      assert.equal(r.json.message, 'pod waiting does not have a host assigned');
    }
    const wrong = await ctx.s.admin.request('GET', `${NS}/pods/waiting/log?container=nope`);
    assert.equal(wrong.status, 400);
    assert.equal(wrong.json.message, 'container nope is not valid for pod waiting');
    const tail = await ctx.s.admin.request('GET', `${NS}/pods/waiting/log?tailLines=-1`);
    assert.equal(tail.status, 422);
    assert.equal(tail.json.details.causes[0].field, 'tailLines');
    assert.equal((await ctx.s.admin.request('GET', `${NS}/pods/ghost/log`)).status, 404);
  });

  it('asks for a container when a pod has several', async () => {
    await create(pod('two', [c('a'), c('b')], { initContainers: [c('init')] }));
    const log = await ctx.s.admin.request('GET', `${NS}/pods/two/log`);
    assert.equal(log.status, 400);
    assert.equal(log.json.message, 'a container name must be specified for pod two, choose one of: [init a b]');
    const exec = await ctx.s.admin.request('POST', `${NS}/pods/two/exec?command=ls`);
    assert.equal(exec.json.message, 'a container name must be specified for pod two, choose one of: [a b] or one of the init containers: [init]');
  });

  it('answers a bound pod and nodes/proxy from the node object: missing, without an address, or with no kubelet here', async () => {
    await create(pod('on-node', [c('a')]));
    await ctx.s.admin.request('POST', `${NS}/pods/on-node/binding`, { metadata: { name: 'on-node' }, target: { name: 'worker-1' } });
    let r = await ctx.s.admin.request('GET', `${NS}/pods/on-node/log`);
    assert.equal(r.status, 404);
    assert.equal(r.json.message, 'nodes "worker-1" not found');
    assert.equal((await ctx.s.admin.request('POST', '/api/v1/nodes', { metadata: { name: 'worker-1' } })).status, 201);
    r = await ctx.s.admin.request('GET', `${NS}/pods/on-node/log`);
    assert.equal(r.status, 500);
    assert.equal(r.json.message, 'no preferred addresses found; known addresses: []');
    r = await ctx.s.admin.request('GET', '/api/v1/nodes/worker-1/proxy/metrics');
    assert.equal(r.status, 500);
    assert.equal(r.json.message, 'no preferred addresses found; known addresses: []');
    await ctx.s.admin.request('PATCH', '/api/v1/nodes/worker-1/status', { status: { addresses: [{ type: 'InternalIP', address: '192.0.2.10' }] } }, MERGE);
    r = await ctx.s.admin.request('GET', '/api/v1/nodes/worker-1:10250/proxy/metrics');
    assert.equal(r.status, 503);
    assert.equal((await ctx.s.admin.request('GET', '/api/v1/nodes/absent/proxy/')).status, 404);
  });

  it('adds ephemeral containers with kubectl debug, only through /ephemeralcontainers', async () => {
    const early = await ctx.s.admin.request('POST', `${NS}/pods`, pod('dbg', [c('app')], { ephemeralContainers: [{ name: 'e', image: 'busybox' }] }));
    assert.equal(early.status, 422);
    assert.equal(early.json.message, 'Pod "dbg" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create');
    await create(pod('dbg', [c('app')]));
    await ctx.k.ok(['debug', 'dbg', '--image=busybox:1.36', '--container=debugger', '--target=app', '--', 'sleep', '1d']);
    const p = (await ctx.s.admin.request('GET', `${NS}/pods/dbg/ephemeralcontainers`)).json;
    assert.equal(p.kind, 'Pod');
    const ec = p.spec.ephemeralContainers;
    assert.equal(ec.length, 1);
    assert.equal(ec[0].name, 'debugger');
    assert.equal(ec[0].targetContainerName, 'app');
    assert.equal(ec[0].terminationMessagePolicy, 'File');
    assert.equal(p.metadata.generation, 2);
    // Other changes sent to the subresource are dropped; the existing container may not change or go.
    const sneaky = await ctx.s.admin.request(
      'PATCH',
      `${NS}/pods/dbg/ephemeralcontainers`,
      { spec: { containers: [{ name: 'app', image: 'evil' }] } },
      { 'content-type': 'application/strategic-merge-patch+json' },
    );
    assert.equal(sneaky.status, 200, sneaky.text);
    assert.equal(sneaky.json.spec.containers[0].image, 'nginx:1.27');
    const change = await ctx.s.admin.request(
      'PATCH',
      `${NS}/pods/dbg/ephemeralcontainers`,
      [{ op: 'replace', path: '/spec/ephemeralContainers/0/image', value: 'busybox:1.37' }],
      { 'content-type': 'application/json-patch+json' },
    );
    assert.equal(change.status, 422);
    assert.match(change.json.message, /spec\.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be changed/);
    const remove = await ctx.s.admin.request('PATCH', `${NS}/pods/dbg/ephemeralcontainers`, { spec: { ephemeralContainers: null } }, MERGE);
    assert.equal(remove.status, 422);
    assert.match(remove.json.message, /existing ephemeral containers "debugger" may not be removed/);
    const withPorts = await ctx.s.admin.request(
      'PATCH',
      `${NS}/pods/dbg/ephemeralcontainers`,
      [{ op: 'add', path: '/spec/ephemeralContainers/-', value: { name: 'x', image: 'busybox', ports: [{ containerPort: 80 }] } }],
      { 'content-type': 'application/json-patch+json' },
    );
    assert.equal(withPorts.status, 422);
    assert.equal(withPorts.json.details.causes[0].field, 'spec.ephemeralContainers[1].ports');
    assert.equal(withPorts.json.details.causes[0].message, 'Forbidden: cannot be set for an Ephemeral Container');
  });

  it('resizes only container resources, keeping the QoS class', async () => {
    await create(pod('rs', [c('app', { requests: { cpu: '100m', memory: '64Mi' } })]));
    const r = await ctx.k.run([
      'patch',
      'pod',
      'rs',
      '--subresource',
      'resize',
      '--type=strategic',
      '-p',
      '{"spec":{"containers":[{"name":"app","image":"other","resources":{"requests":{"cpu":"200m","memory":"64Mi"}}}]}}',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const p = (await ctx.s.admin.request('GET', `${NS}/pods/rs`)).json;
    assert.deepEqual(p.spec.containers[0].resources.requests, { cpu: '200m', memory: '64Mi' });
    assert.equal(p.spec.containers[0].image, 'nginx:1.27');
    assert.equal(p.metadata.generation, 2);
    const qos = await ctx.s.admin.request(
      'PATCH',
      `${NS}/pods/rs/resize`,
      { spec: { containers: [{ name: 'app', resources: { requests: null } }] } },
      { 'content-type': 'application/strategic-merge-patch+json' },
    );
    assert.equal(qos.status, 422, qos.text);
    assert.match(qos.json.message, /Pod QOS Class may not change as a result of resizing/);
  });

  it('lists the pod subresources in discovery as kube does', async () => {
    const v1 = (await ctx.s.admin.request('GET', '/api/v1')).json;
    const byName = new Map<string, { kind: string; verbs: string[]; group?: string; version?: string }>(v1.resources.map((x: { name: string }) => [x.name, x]));
    assert.deepEqual(byName.get('pods/eviction'), {
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
    assert.deepEqual(byName.get('pods/binding')?.verbs, ['create']);
    assert.deepEqual(byName.get('pods/log')?.verbs, ['get']);
    assert.deepEqual(byName.get('pods/resize')?.verbs, ['get', 'patch', 'update']);
    assert.equal(byName.get('nodes/proxy')?.kind, 'NodeProxyOptions');
  });
});
