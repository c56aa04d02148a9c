// The parsed form of FlowSchemas and PriorityLevelConfigurations the
// classifier and the dispatcher read, taken tolerantly from stored objects
// (they were validated on write; anything odd here is skipped, never thrown).
import type { KObject } from '../../lib/api/meta.js';
import { at, list, num, str, strings } from '../../lib/registry/fields.js';

export interface Subject {
  kind: string;
  name: string;
  namespace: string;
}
export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope: boolean;
  namespaces: string[];
}
export interface NonResourceRule {
  verbs: string[];
  urls: string[];
}
export interface PolicyRule {
  subjects: Subject[];
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
}

export interface FlowSchema {
  name: string;
  uid: string;
  level: string;
  precedence: number;
  distinguisher: '' | 'ByUser' | 'ByNamespace';
  rules: PolicyRule[];
}

export interface PriorityLevel {
  name: string;
  uid: string;
  exempt: boolean;
  /** nominalConcurrencyShares (Exempt levels have them too: they shape everyone's NominalCL). */
  shares: number;
  /** lendablePercent: the share of NominalCL other levels may borrow. */
  lendablePercent: number;
  /** borrowingLimitPercent; absent: no limit (Exempt levels never have one). */
  borrowingLimitPercent?: number;
  /** Absent: Reject when full. */
  queuing?: { queues: number; handSize: number; queueLengthLimit: number };
}

function subjectOf(s: unknown): Subject {
  const kind = str(s, 'kind');
  if (kind === 'User') return { kind, name: str(s, 'user', 'name'), namespace: '' };
  if (kind === 'Group') return { kind, name: str(s, 'group', 'name'), namespace: '' };
  return { kind, name: str(s, 'serviceAccount', 'name'), namespace: str(s, 'serviceAccount', 'namespace') };
}

export function flowSchemaOf(o: KObject): FlowSchema {
  const d = str(o, 'spec', 'distinguisherMethod', 'type');
  return {
    name: o.metadata.name ?? '',
    uid: o.metadata.uid ?? '',
    level: str(o, 'spec', 'priorityLevelConfiguration', 'name'),
    precedence: num(o, 'spec', 'matchingPrecedence') || 1000,
    distinguisher: d === 'ByUser' || d === 'ByNamespace' ? d : '',
    rules: list(o, 'spec', 'rules').map((r) => ({
      subjects: list(r, 'subjects').map(subjectOf),
      resourceRules: list(r, 'resourceRules').map((x) => ({
        verbs: strings(x, 'verbs'),
        apiGroups: strings(x, 'apiGroups'),
        resources: strings(x, 'resources'),
        clusterScope: at(x, 'clusterScope') === true,
        namespaces: strings(x, 'namespaces'),
      })),
      nonResourceRules: list(r, 'nonResourceRules').map((x) => ({ verbs: strings(x, 'verbs'), urls: strings(x, 'nonResourceURLs') })),
    })),
  };
}

export function priorityLevelOf(o: KObject): PriorityLevel {
  const base = { name: o.metadata.name ?? '', uid: o.metadata.uid ?? '' };
  const count = (v: unknown, dflt: number) => (typeof v === 'number' && v >= 0 ? v : dflt);
  if (str(o, 'spec', 'type') === 'Exempt') {
    return {
      ...base,
      exempt: true,
      shares: count(at(o, 'spec', 'exempt', 'nominalConcurrencyShares'), 0),
      lendablePercent: Math.min(100, count(at(o, 'spec', 'exempt', 'lendablePercent'), 0)),
    };
  }
  const level: PriorityLevel = {
    ...base,
    exempt: false,
    shares: count(at(o, 'spec', 'limited', 'nominalConcurrencyShares'), 30),
    lendablePercent: Math.min(100, count(at(o, 'spec', 'limited', 'lendablePercent'), 0)),
  };
  const borrowing = at(o, 'spec', 'limited', 'borrowingLimitPercent');
  if (typeof borrowing === 'number' && borrowing >= 0) level.borrowingLimitPercent = borrowing;
  if (str(o, 'spec', 'limited', 'limitResponse', 'type') === 'Queue') {
    const q = (k: string, dflt: number) => num(o, 'spec', 'limited', 'limitResponse', 'queuing', k) || dflt;
    level.queuing = { queues: q('queues', 64), handSize: q('handSize', 8), queueLengthLimit: q('queueLengthLimit', 50) };
  }
  return level;
}
