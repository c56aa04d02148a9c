// The node graph and the Node authorizer's decisions, without a server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { NodeAuthorizer, NodeGraph } from '../../gateway/authz/node/index.js';
import type { Attributes } from '../../gateway/authz/types.js';

const node = (name: string) => ({ username: `system:node:${name}`, groups: ['system:nodes', 'system:authenticated'] });

function attrs(over: Partial<Attributes>): Attributes {
  return {
    user: node('n1'),
    verb: 'get',
    isResourceRequest: true,
    path: '',
    apiGroup: '',
    apiVersion: 'v1',
    namespace: 'ns',
    resource: 'secrets',
    subresource: '',
    name: '',
    ...over,
  };
}

function pod(name: string, nodeName: string, spec: Record<string, unknown> = {}): KObject {
  return { metadata: { name, namespace: 'ns' }, spec: { nodeName, containers: [{ name: 'c', image: 'i' }], ...spec } };
}

describe('the node graph', () => {
  it("relates every kind of pod reference to the pod's node", () => {
    const g = new NodeGraph();
    g.setPod(
      pod('p', 'n1', {
        imagePullSecrets: [{ name: 'pull' }],
        initContainers: [{ name: 'i', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'envsec', key: 'k' } } }] }],
        containers: [
          { name: 'c', envFrom: [{ configMapRef: { name: 'envcm' } }], env: [{ name: 'F', valueFrom: { configMapKeyRef: { name: 'keycm', key: 'k' } } }] },
        ],
        volumes: [
          { name: 'a', secret: { secretName: 'volsec' } },
          { name: 'b', projected: { sources: [{ secret: { name: 'projsec' } }, { configMap: { name: 'projcm' } }] } },
          { name: 'c', persistentVolumeClaim: { claimName: 'claim' } },
          { name: 'd', ephemeral: { volumeClaimTemplate: {} } },
          { name: 'e', csi: { driver: 'x', nodePublishSecretRef: { name: 'csisec' } } },
        ],
      }),
    );
    for (const s of ['pull', 'envsec', 'volsec', 'projsec', 'csisec']) assert.ok(g.hasPath('n1', 'secret', 'ns', s), s);
    for (const c of ['envcm', 'keycm', 'projcm']) assert.ok(g.hasPath('n1', 'configmap', 'ns', c), c);
    assert.ok(g.hasPath('n1', 'pvc', 'ns', 'claim'));
    assert.ok(g.hasPath('n1', 'pvc', 'ns', 'p-d'));
    assert.ok(g.hasPath('n1', 'serviceaccount', 'ns', 'default'));
    assert.ok(!g.hasPath('n2', 'secret', 'ns', 'pull'));
    assert.ok(!g.hasPath('n1', 'secret', 'other', 'pull'));
  });

  it('reaches a persistent volume and its secrets through the bound claim', () => {
    const g = new NodeGraph();
    g.setPod(pod('p', 'n1', { volumes: [{ name: 'c', persistentVolumeClaim: { claimName: 'claim' } }] }));
    g.setPv({
      metadata: { name: 'pv1' },
      spec: { claimRef: { namespace: 'ns', name: 'claim' }, csi: { driver: 'd', nodeStageSecretRef: { name: 'stage', namespace: 'sys' } } },
    });
    g.setPv({ metadata: { name: 'pv2' }, spec: { claimRef: { namespace: 'ns', name: 'unused' } } });
    assert.ok(g.hasPath('n1', 'pv', '', 'pv1'));
    assert.ok(!g.hasPath('n1', 'pv', '', 'pv2'));
    assert.ok(g.hasPath('n1', 'secret', 'sys', 'stage'));
    g.deletePv('pv1');
    assert.ok(!g.hasPath('n1', 'secret', 'sys', 'stage'));
  });

  it('keeps an edge while another pod on the node still references it', () => {
    const g = new NodeGraph();
    const vol = { volumes: [{ name: 'a', secret: { secretName: 's' } }] };
    g.setPod(pod('a', 'n1', vol));
    g.setPod(pod('b', 'n1', vol));
    g.deletePod('ns', 'a');
    assert.ok(g.hasPath('n1', 'secret', 'ns', 's'));
    g.setPod(pod('b', 'n2', vol));
    assert.ok(!g.hasPath('n1', 'secret', 'ns', 's'));
    assert.ok(g.hasPath('n2', 'secret', 'ns', 's'));
    g.resetPods([]);
    assert.ok(!g.hasPath('n2', 'secret', 'ns', 's'));
  });

  it('ignores pods that are not bound to a node', () => {
    const g = new NodeGraph();
    g.setPod(pod('a', '', { volumes: [{ name: 'a', secret: { secretName: 's' } }] }));
    assert.ok(!g.hasPath('', 'secret', 'ns', 's'));
  });
});

describe('the Node authorizer', () => {
  const g = new NodeGraph();
  g.setPod(pod('p1', 'n1', { serviceAccountName: 'sa', volumes: [{ name: 'c', persistentVolumeClaim: { claimName: 'claim' } }] }));
  const withSel = new NodeAuthorizer(g, { withSelectors: true });
  const without = new NodeAuthorizer(g, { withSelectors: false });

  const cases: Array<[string, Partial<Attributes>, 'allow' | 'no-opinion', NodeAuthorizer?]> = [
    ['has no opinion on users that are not nodes', { user: { username: 'alice', groups: [] } }, 'no-opinion'],
    [
      'has no opinion on a node without a name',
      { user: { username: 'system:node:', groups: ['system:nodes'] }, resource: 'services', verb: 'list' },
      'no-opinion',
    ],
    ['allows reading services', { resource: 'services', verb: 'list', namespace: '' }, 'allow'],
    ['allows creating events', { resource: 'events', verb: 'create' }, 'allow'],
    ['allows creating token reviews', { apiGroup: 'authentication.k8s.io', resource: 'tokenreviews', verb: 'create', namespace: '' }, 'allow'],
    ['allows creating subject access reviews', { apiGroup: 'authorization.k8s.io', resource: 'subjectaccessreviews', verb: 'create', namespace: '' }, 'allow'],
    ['allows CSR create and watch', { apiGroup: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'watch', namespace: '' }, 'allow'],
    ['refuses deleting CSRs', { apiGroup: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'delete', namespace: '' }, 'no-opinion'],
    ['refuses writing secrets', { resource: 'secrets', verb: 'update', name: 'x' }, 'no-opinion'],
    ['allows getting a related claim', { resource: 'persistentvolumeclaims', name: 'claim' }, 'allow'],
    ['refuses listing claims', { resource: 'persistentvolumeclaims', verb: 'list' }, 'no-opinion'],
    ["allows a token for a pod's service account", { resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'sa' }, 'allow'],
    ['refuses reading that service account', { resource: 'serviceaccounts', name: 'sa' }, 'no-opinion'],
    ["allows the node's own lease", { apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', name: 'n1', verb: 'update' }, 'allow'],
    [
      "refuses another node's lease",
      { apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', name: 'n2', verb: 'update' },
      'no-opinion',
    ],
    ['allows pod status updates', { resource: 'pods', subresource: 'status', verb: 'patch', name: 'p9' }, 'allow'],
    ['refuses listing pods without the field selector', { resource: 'pods', verb: 'list', namespace: '' }, 'no-opinion'],
    [
      'allows listing pods with spec.nodeName=<itself>',
      { resource: 'pods', verb: 'list', namespace: '', fieldSelector: [{ field: 'spec.nodeName', operator: '=', value: 'n1' }] },
      'allow',
    ],
    ['without AuthorizeNodeWithSelectors allows listing all pods', { resource: 'pods', verb: 'list', namespace: '' }, 'allow', without],
    ['without AuthorizeNodeWithSelectors allows listing all nodes', { resource: 'nodes', verb: 'list', namespace: '' }, 'allow', without],
    ['refuses non-resource paths', { isResourceRequest: false, path: '/healthz', resource: '' }, 'no-opinion'],
  ];
  for (const [name, over, want, authz] of cases) {
    it(name, () => assert.equal((authz ?? withSel).authorize(attrs(over)).kind, want));
  }
});
