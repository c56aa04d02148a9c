// The shape of the default policy data, and a compact way to write rules:
// `rule('get list watch', [''], 'pods services')` — verbs and resources are
// space-separated, API groups a list ('' = core), resourceNames optional.
export interface RuleData {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface ClusterRoleData {
  name: string;
  rules: RuleData[];
  /** Extra labels (aggregate-to-*); every default role also gets kubernetes.io/bootstrapping. */
  labels?: Record<string, string>;
  /** Label selectors of an aggregated role; its rules are filled by the aggregation controller. */
  aggregateFrom?: Array<Record<string, string>>;
}

export interface SubjectData {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  namespace?: string;
}

export interface ClusterRoleBindingData {
  name: string;
  role: string;
  subjects: SubjectData[];
}

const words = (s: string) => s.split(' ').filter(Boolean);

export function rule(verbs: string, apiGroups: string[], resources: string, resourceNames?: string): RuleData {
  return { verbs: words(verbs), apiGroups, resources: words(resources), ...(resourceNames ? { resourceNames: words(resourceNames) } : {}) };
}

export function urls(verbs: string, paths: string): RuleData {
  return { verbs: words(verbs), nonResourceURLs: words(paths) };
}

export const READ = 'get list watch';
/** The rule nearly every component and controller has: writing events. */
export const EVENTS_WRITE = rule('create patch update', ['', 'events.k8s.io'], 'events');
