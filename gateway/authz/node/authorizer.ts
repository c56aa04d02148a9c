// The Node authorizer (kube's plugin/pkg/auth/authorizer/node): node agents
// may read the secrets, config maps, claims and volumes of the pods bound to
// them, create tokens for those pods' service accounts, and otherwise do what
// the static node rules allow. With AuthorizeNodeWithSelectors a node reads
// only its own Node and lists/watches only pods selected by
// spec.nodeName=<itself>. Anyone who is not a node agent gets no opinion.
import type { Attributes, Authorizer, Decision, Explanation, SubjectGrant } from '../types.js';
import { NO_OPINION } from '../types.js';
import type { NodeGraph, VertexKind } from './graph.js';
import { NODE_USER_PREFIX, NODES_GROUP, nodeIdentity } from '../../../lib/node/identity.js';
import { NODE_RULES, rulesAllow } from './rules.js';

/** Core resources the graph holds, by their vertex kind. */
const VERTEX_OF: Readonly<Record<string, VertexKind | undefined>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, VertexKind>, {
    pods: 'pod',
    secrets: 'secret',
    configmaps: 'configmap',
    persistentvolumeclaims: 'pvc',
    persistentvolumes: 'pv',
    serviceaccounts: 'serviceaccount',
  }),
);

const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });
const noOpinion = (reason: string): Decision => ({ kind: 'no-opinion', reason });

export interface NodeAuthorizerOptions {
  /** Feature gate AuthorizeNodeWithSelectors (needs AuthorizeWithSelectors). */
  readonly withSelectors: boolean;
}

export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';

  /**
   * Set only for the length of one synchronous `explain`: what the decision
   * rested on. A decision never awaits, so no other request can see it.
   */
  private tracing: { rule?: 'graph' | 'static'; path?: string[] } | undefined;

  constructor(
    private readonly graph: NodeGraph,
    private readonly opts: NodeAuthorizerOptions,
  ) {}

  authorize(a: Attributes): Decision {
    const node = nodeIdentity(a.user);
    if (node === undefined) return NO_OPINION;
    if (node === '') return noOpinion(`unknown node for user "${a.user.username}"`);
    if (a.isResourceRequest) {
      const d = this.subdivided(node, a);
      if (d) return d;
    }
    if (!rulesAllow(a, NODE_RULES)) return NO_OPINION;
    if (this.tracing) this.tracing.rule = 'static';
    return ALLOW;
  }

  /** The decision and what it rested on: the graph path, kube's static node rules, or the node's own name. */
  explain(a: Attributes): Explanation {
    const trace: { rule?: 'graph' | 'static'; path?: string[] } = {};
    this.tracing = trace;
    let decision: Decision;
    try {
      decision = this.authorize(a);
    } finally {
      this.tracing = undefined;
    }
    const node = nodeIdentity(a.user);
    if (decision.kind !== 'allow' || !node) return { decision };
    // An allow by neither the graph nor the static rules came from the node's own name (its Node, lease, pods).
    return { decision, facts: { node: { node, rule: trace.rule ?? 'node-name', ...(trace.path ? { path: trace.path } : {}) } } };
  }

  /**
   * Who-can: the node agents the request is allowed to, found by asking the
   * decision itself. First for a node that cannot exist (`*` is no DNS name):
   * allowed means every node is (static rules; writes NodeRestriction then
   * limits), the group system:nodes; otherwise for each node the graph links
   * the object to, and the node an object of the node's own name belongs to.
   */
  subjects(a: Attributes): SubjectGrant[] {
    const as = (node: string): Attributes => ({ ...a, user: { username: `${NODE_USER_PREFIX}${node}`, groups: [NODES_GROUP] } });
    const any = this.explain(as('*'));
    if (any.decision.kind === 'allow') {
      return [
        { kind: 'Group', name: NODES_GROUP, facts: { node: { node: '*', rule: (any.facts?.['node'] as { rule?: string } | undefined)?.rule ?? 'static' } } },
      ];
    }
    const candidates = new Set<string>();
    const kind = VERTEX_OF[a.apiGroup === '' ? a.resource : ''];
    if (kind && a.name !== '') for (const n of this.graph.nodesReaching(kind, a.namespace, a.name)) candidates.add(n);
    if (a.name !== '' && (a.resource === 'nodes' || a.resource === 'leases')) candidates.add(a.name);
    const out: SubjectGrant[] = [];
    for (const node of candidates) {
      const e = this.explain(as(node));
      if (e.decision.kind === 'allow') out.push({ kind: 'User', name: `${NODE_USER_PREFIX}${node}`, facts: e.facts ?? {} });
    }
    return out;
  }

  /** Resources whose access depends on the graph or the node's name; undefined = use the static rules. */
  private subdivided(node: string, a: Attributes): Decision | undefined {
    if (a.apiGroup === 'coordination.k8s.io' && a.resource === 'leases') return this.lease(node, a);
    if (a.apiGroup !== '') return undefined;
    switch (a.resource) {
      case 'secrets':
        return this.readNamespaced(node, 'secret', a);
      case 'configmaps':
        return this.readNamespaced(node, 'configmap', a);
      case 'persistentvolumeclaims':
        if (a.subresource === 'status') {
          if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
          return this.related(node, 'pvc', a);
        }
        return this.get(node, 'pvc', a);
      case 'persistentvolumes':
        return this.get(node, 'pv', a);
      case 'serviceaccounts':
        return this.createToken(node, a);
      case 'nodes':
        return this.opts.withSelectors ? this.nodeObject(node, a) : undefined;
      case 'pods':
        return this.opts.withSelectors ? this.pod(node, a) : undefined;
      default:
        return undefined;
    }
  }

  private related(node: string, kind: VertexKind, a: Attributes): Decision {
    if (a.name === '') return noOpinion('No Object name found');
    const path = this.graph.pathOf(node, kind, a.namespace, a.name);
    if (!path) return noOpinion(`no relationship found between node '${node}' and this object`);
    if (this.tracing) {
      this.tracing.rule = 'graph';
      this.tracing.path = path;
    }
    return ALLOW;
  }

  private readNamespaced(node: string, kind: VertexKind, a: Attributes): Decision {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return noOpinion('can only read resources of this type');
    if (a.subresource !== '') return noOpinion('cannot read subresource');
    if (a.namespace === '') return noOpinion('can only read namespaced object of this type');
    return this.related(node, kind, a);
  }

  private get(node: string, kind: VertexKind, a: Attributes): Decision {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource !== '') return noOpinion('cannot get subresource');
    return this.related(node, kind, a);
  }

  private createToken(node: string, a: Attributes): Decision {
    if (a.verb !== 'create' || a.name === '') return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    return this.related(node, 'serviceaccount', a);
  }

  private lease(node: string, a: Attributes): Decision {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
    if (a.namespace !== 'kube-node-lease') return noOpinion('can only access leases in the "kube-node-lease" system namespace');
    // The name of a create is not known here; NodeRestriction checks it.
    if (a.verb !== 'create' && a.name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
    return ALLOW;
  }

  private nodeObject(node: string, a: Attributes): Decision {
    if (a.subresource === '') {
      // NodeRestriction limits writes to the node's own object.
      if (a.verb === 'create' || a.verb === 'update' || a.verb === 'patch') return ALLOW;
      if (a.verb === 'get' || a.verb === 'list' || a.verb === 'watch') {
        // By name, not through the graph, so a kubelet can look for its Node before creating it.
        if (a.name === node) return ALLOW;
        if (a.name === '') return noOpinion(`node '${node}' cannot read all nodes, only its own Node object`);
        return noOpinion(`node '${node}' cannot read '${a.name}', only its own Node object`);
      }
    } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) {
      return ALLOW;
    }
    return NO_OPINION;
  }

  private pod(node: string, a: Attributes): Decision {
    if (a.subresource === '') {
      switch (a.verb) {
        case 'get':
          return this.get(node, 'pod', a);
        case 'list':
        case 'watch':
          if (a.fieldSelector?.some((r) => r.field === 'spec.nodeName' && r.operator === '=' && r.value === node)) return ALLOW;
          if (a.name !== '') return this.related(node, 'pod', a);
          return noOpinion('can only list/watch pods with spec.nodeName field selector');
        // Mirror pods; NodeRestriction limits them to pods bound to the node.
        case 'create':
        case 'delete':
          return ALLOW;
      }
    } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) {
      return ALLOW;
    } else if (a.subresource === 'eviction' && a.verb === 'create') {
      return ALLOW;
    }
    return NO_OPINION;
  }
}
