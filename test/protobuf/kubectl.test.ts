// Interop with the real kubectl: a loopback server answers just enough
// discovery for kubectl and records every request body; the protobuf ones are
// decoded with our codec and compared with what kube-apiserver would store.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeEnvelope, PROTOBUF_MEDIA_TYPE } from '../../lib/protobuf/codec.js';

const run = promisify(execFile);
const kubectlPath = '/usr/bin/kubectl';

interface Recorded {
  method: string;
  path: string;
  contentType: string;
  object: Record<string, unknown>;
}
const recorded: Recorded[] = [];
let server: Server;
let dir: string;
let kubeconfig: string;

const verbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const res = (name: string, kind: string, namespaced = true) => ({ name, singularName: kind.toLowerCase(), namespaced, kind, verbs });
const discovery = (port: number): Record<string, unknown> => ({
  '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${port}` }] },
  '/apis': {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [
      {
        name: 'rbac.authorization.k8s.io',
        versions: [{ groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' }],
        preferredVersion: { groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' },
      },
    ],
  },
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      res('configmaps', 'ConfigMap'),
      res('secrets', 'Secret'),
      res('namespaces', 'Namespace', false),
      res('serviceaccounts', 'ServiceAccount'),
      res('services', 'Service'),
      res('pods', 'Pod'),
    ],
  },
  '/apis/rbac.authorization.k8s.io/v1': {
    kind: 'APIResourceList',
    groupVersion: 'rbac.authorization.k8s.io/v1',
    resources: [
      res('roles', 'Role'),
      res('rolebindings', 'RoleBinding'),
      res('clusterroles', 'ClusterRole', false),
      res('clusterrolebindings', 'ClusterRoleBinding', false),
    ],
  },
});

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-kubectl-'));
  server = createServer((req, reply) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0]!;
      const send = (code: number, obj: unknown) => {
        reply.writeHead(code, { 'content-type': 'application/json' });
        reply.end(JSON.stringify(obj));
      };
      const doc = discovery((server.address() as AddressInfo).port)[path];
      if (req.method === 'GET' && doc) return send(200, doc);
      if (req.method !== 'POST') return send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' });
      const contentType = req.headers['content-type'] ?? '';
      try {
        const object = contentType.startsWith(PROTOBUF_MEDIA_TYPE) ? decodeEnvelope(body).object : (JSON.parse(body.toString()) as Record<string, unknown>);
        recorded.push({ method: req.method, path, contentType, object });
        // The token subresource must answer with a token, or kubectl reports an error.
        if (object.kind === 'TokenRequest') return send(201, { ...object, status: { token: 'tok', expirationTimestamp: '2030-01-01T00:00:00Z' } });
        return send(201, object);
      } catch (err) {
        return send(400, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 400, reason: 'BadRequest', message: String(err) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: c',
      'clusters: [{name: c, cluster: {server: "http://127.0.0.1:' + port + '"}}]',
      'contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]',
      'users: [{name: u, user: {token: t}}]',
      '',
    ].join('\n'),
  );
});

after(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function kubectl(...args: string[]): Promise<Recorded> {
  const before = recorded.length;
  await run(kubectlPath, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin', HOME: dir },
  });
  const posts = recorded.slice(before);
  assert.equal(posts.length, 1, `expected one POST from kubectl ${args.join(' ')}`);
  return posts[0]!;
}

const protobuf = (r: Recorded) => assert.equal(r.contentType, PROTOBUF_MEDIA_TYPE, `${r.path} body was ${r.contentType}`);

test('kubectl create configmap sends protobuf that decodes to the stored JSON', async () => {
  const r = await kubectl('create', 'configmap', 'c1', '--from-literal=a=b', '--from-literal=n=1');
  protobuf(r);
  assert.equal(r.path, '/api/v1/namespaces/default/configmaps');
  assert.deepEqual(r.object, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c1' }, data: { a: 'b', n: '1' } });
});

test('kubectl create secret generic sends data as bytes that decode to base64', async () => {
  const r = await kubectl('create', 'secret', 'generic', 's1', '--from-literal=k=v');
  protobuf(r);
  // No --type: the body carries no type; the apiserver's defaulting sets Opaque later.
  assert.deepEqual(r.object, { kind: 'Secret', apiVersion: 'v1', metadata: { name: 's1' }, data: { k: 'dg==' } });
});

test('kubectl create namespace sends a protobuf Namespace', async () => {
  const r = await kubectl('create', 'namespace', 'ns1');
  protobuf(r);
  assert.deepEqual(r.object, { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'ns1' }, spec: {}, status: {} });
});

test('kubectl create serviceaccount sends a protobuf ServiceAccount', async () => {
  const r = await kubectl('create', 'serviceaccount', 'sa1');
  protobuf(r);
  assert.deepEqual(r.object, { kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'sa1' } });
});

test('kubectl create service clusterip sends targetPort 8080 as an IntOrString number', async () => {
  const r = await kubectl('create', 'service', 'clusterip', 'svc1', '--tcp=80:8080');
  protobuf(r);
  const obj = r.object as { metadata: unknown; spec: { ports: unknown; selector: unknown; type: string } };
  assert.deepEqual(obj.metadata, { name: 'svc1', labels: { app: 'svc1' } });
  assert.deepEqual(obj.spec.ports, [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }]);
  assert.deepEqual(obj.spec.selector, { app: 'svc1' });
  assert.equal(obj.spec.type, 'ClusterIP');
});

test('kubectl run sends a Pod with image, port, env and labels', async () => {
  // kubectl 1.32 sends this one as JSON; 1.33 as protobuf. Either must give the same object.
  const r = await kubectl('run', 'p1', '--image=nginx', '--port=80', '--labels=app=x', '--env=A=B');
  const pod = r.object as { metadata: { name: string; labels: unknown }; spec: { containers: Array<Record<string, unknown>> } };
  assert.ok(r.contentType === 'application/json' || r.contentType === PROTOBUF_MEDIA_TYPE, r.contentType);
  assert.equal(r.object.kind, 'Pod');
  assert.equal(pod.metadata.name, 'p1');
  assert.deepEqual(pod.metadata.labels, { app: 'x' });
  const [c] = pod.spec.containers;
  assert.equal(c!.image, 'nginx');
  assert.deepEqual(c!.ports, [{ containerPort: 80 }]);
  assert.deepEqual(c!.env, [{ name: 'A', value: 'B' }]);
});

test('kubectl create role and rolebinding send protobuf RBAC objects', async () => {
  const role = await kubectl('create', 'role', 'r1', '--verb=get,list', '--resource=pods');
  protobuf(role);
  assert.deepEqual(role.object, {
    kind: 'Role',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    metadata: { name: 'r1' },
    rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
  });
  const rb = await kubectl('create', 'rolebinding', 'rb1', '--role=r1', '--serviceaccount=default:sa1');
  protobuf(rb);
  assert.deepEqual(rb.object, {
    kind: 'RoleBinding',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    metadata: { name: 'rb1' },
    subjects: [{ kind: 'ServiceAccount', name: 'sa1', namespace: 'default' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r1' },
  });
});

test('kubectl create clusterrole and clusterrolebinding send protobuf RBAC objects', async () => {
  const cr = await kubectl('create', 'clusterrole', 'cr1', '--verb=get', '--non-resource-url=/healthz');
  protobuf(cr);
  assert.deepEqual((cr.object as { rules: unknown }).rules, [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]);
  const crb = await kubectl('create', 'clusterrolebinding', 'crb1', '--clusterrole=cr1', '--user=alice');
  protobuf(crb);
  assert.deepEqual((crb.object as { subjects: unknown }).subjects, [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }]);
});

test('kubectl create token sends a protobuf TokenRequest', async () => {
  const r = await kubectl('create', 'token', 'sa1', '--duration=10m', '--audience=api');
  protobuf(r);
  assert.equal(r.path, '/api/v1/namespaces/default/serviceaccounts/sa1/token');
  assert.deepEqual(r.object.spec, { audiences: ['api'], expirationSeconds: 600 });
});
