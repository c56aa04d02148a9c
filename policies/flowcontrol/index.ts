// kube-apiserver's bootstrap API Priority and Fairness configuration
// (k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go, v1 values,
// checked field by field against kubernetes/apiserver 24a394e, 2026-07, which
// no longer has the endpoints/configmaps leader-election schemas
// `endpoint-controller` and `workload-leader-election`): the mandatory
// `exempt` and `catch-all` objects, which the server keeps as written, and the
// suggested ones, which it creates and updates while they carry
// `apf.kubernetes.io/autoupdate-spec: "true"`.
import type { KObject } from '../../lib/api/meta.js';

export const AUTOUPDATE_SPEC_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';
const API_VERSION = 'flowcontrol.apiserver.k8s.io/v1';

type Subject =
  | { kind: 'User'; user: { name: string } }
  | { kind: 'Group'; group: { name: string } }
  | { kind: 'ServiceAccount'; serviceAccount: { namespace: string; name: string } };

const user = (name: string): Subject => ({ kind: 'User', user: { name } });
const group = (name: string): Subject => ({ kind: 'Group', group: { name } });
const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', serviceAccount: { namespace, name } });

interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}
interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}
interface Rule {
  subjects: Subject[];
  resourceRules?: ResourceRule[];
  nonResourceRules?: NonResourceRule[];
}

/** Every resource in every namespace and at cluster scope, and every non-resource URL. */
const everything = (subjects: Subject[]): Rule => ({
  subjects,
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
});

const meta = (name: string) => ({ name, annotations: { [AUTOUPDATE_SPEC_ANNOTATION]: 'true' } });

function limited(name: string, shares: number, lendablePercent: number, queuing?: [number, number, number]): KObject {
  const limitResponse = queuing ? { type: 'Queue', queuing: { queues: queuing[0], handSize: queuing[1], queueLengthLimit: queuing[2] } } : { type: 'Reject' };
  return {
    apiVersion: API_VERSION,
    kind: 'PriorityLevelConfiguration',
    metadata: meta(name),
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: shares, lendablePercent, limitResponse } },
  };
}

function flowSchema(name: string, level: string, precedence: number, distinguisher: 'ByUser' | 'ByNamespace' | undefined, rules: Rule[]): KObject {
  return {
    apiVersion: API_VERSION,
    kind: 'FlowSchema',
    metadata: meta(name),
    spec: {
      priorityLevelConfiguration: { name: level },
      matchingPrecedence: precedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules,
    },
  };
}

// kube's order (user.AllUnauthenticated, user.AllAuthenticated): a spec compared as written must match.
const authenticatedOrNot = [group('system:unauthenticated'), group('system:authenticated')];

export function mandatoryPriorityLevels(): KObject[] {
  return [
    {
      apiVersion: API_VERSION,
      kind: 'PriorityLevelConfiguration',
      metadata: meta('exempt'),
      spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
    },
    limited('catch-all', 5, 0),
  ];
}

export function mandatoryFlowSchemas(): KObject[] {
  return [
    flowSchema('exempt', 'exempt', 1, undefined, [everything([group('system:masters')])]),
    flowSchema('catch-all', 'catch-all', 10000, 'ByUser', [everything(authenticatedOrNot)]),
  ];
}

export function suggestedPriorityLevels(): KObject[] {
  return [
    limited('system', 30, 33, [64, 6, 50]),
    limited('node-high', 40, 25, [64, 6, 50]),
    limited('leader-election', 10, 0, [16, 4, 50]),
    limited('workload-high', 40, 50, [128, 6, 50]),
    limited('workload-low', 100, 90, [128, 6, 50]),
    limited('global-default', 20, 50, [128, 6, 50]),
  ];
}

const kcm = user('system:kube-controller-manager');
const scheduler = user('system:kube-scheduler');
const leases: ResourceRule = { verbs: ['get', 'create', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] };

export function suggestedFlowSchemas(): KObject[] {
  return [
    flowSchema('probes', 'exempt', 2, undefined, [
      {
        subjects: authenticatedOrNot,
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
      },
    ]),
    flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', [
      {
        subjects: [kcm, scheduler, serviceAccount('kube-system', '*')],
        resourceRules: [leases],
      },
    ]),
    flowSchema('system-node-high', 'node-high', 400, 'ByUser', [
      {
        subjects: [group('system:nodes')],
        resourceRules: [
          { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true, namespaces: ['*'] },
          { verbs: ['*'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
        ],
      },
    ]),
    flowSchema('system-nodes', 'system', 500, 'ByUser', [everything([group('system:nodes')])]),
    flowSchema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', [everything([kcm])]),
    flowSchema('kube-scheduler', 'workload-high', 800, 'ByNamespace', [everything([scheduler])]),
    flowSchema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', [everything([serviceAccount('kube-system', '*')])]),
    flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', [everything([group('system:serviceaccounts')])]),
    flowSchema('global-default', 'global-default', 9900, 'ByUser', [everything(authenticatedOrNot)]),
  ];
}
