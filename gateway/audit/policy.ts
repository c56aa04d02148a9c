// The audit policy (audit.k8s.io/v1 Policy, --audit-policy-file): parsed once at
// start with errors naming the field, then asked per request which level and
// stages apply. Rules are tried in order; the first match decides; none = None.
// Matching follows kube-apiserver's policy checker (users, userGroups, verbs,
// resources with `*`, `*/sub`, `res/*` and resourceNames, namespaces,
// nonResourceURLs with a trailing `*`).
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../../lib/config/error.js';
import { ownValue } from '../../lib/api/own.js';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

interface GroupResources {
  group: string;
  resources: readonly string[];
  resourceNames: readonly string[];
}

interface Rule {
  level: Level;
  users: readonly string[];
  userGroups: readonly string[];
  verbs: readonly string[];
  resources: readonly GroupResources[];
  namespaces: readonly string[];
  nonResourceURLs: readonly string[];
  omitStages: readonly Stage[] | undefined;
  omitManagedFields: boolean | undefined;
}

/** What the policy says of one request. */
export interface PolicyDecision {
  readonly level: Level;
  /** Request and RequestResponse keep the request's body; RequestResponse keeps the answer's too. */
  readonly keepsRequestBody: boolean;
  readonly keepsResponseBody: boolean;
  readonly omitStages: ReadonlySet<Stage>;
  readonly omitManagedFields: boolean;
}

/** The request a rule is matched against (RequestInfo has these fields: no object is made per request to ask). */
export interface AuditRequest {
  verb: string;
  isResourceRequest: boolean;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  path: string;
}

export class AuditPolicy {
  private readonly none: PolicyDecision = Object.freeze({
    level: 'None',
    keepsRequestBody: false,
    keepsResponseBody: false,
    omitStages: new Set<Stage>(),
    omitManagedFields: false,
  });
  /** Each rule's answer, built once: a request's decision is a lookup, not an allocation. */
  private readonly decisions: readonly PolicyDecision[];
  private constructor(
    private readonly rules: readonly Rule[],
    omitStages: readonly Stage[],
    omitManagedFields: boolean,
  ) {
    this.decisions = rules.map((r) =>
      r.level === 'None'
        ? this.none
        : Object.freeze({
            level: r.level,
            keepsRequestBody: r.level !== 'Metadata',
            keepsResponseBody: r.level === 'RequestResponse',
            omitStages: new Set([...omitStages, ...(r.omitStages ?? [])]),
            omitManagedFields: r.omitManagedFields ?? omitManagedFields,
          }),
    );
  }

  /** Parses a policy file's text (YAML or JSON); throws a ConfigError naming the field. */
  static parse(text: string, source: string): AuditPolicy {
    let doc: unknown;
    try {
      doc = parseYaml(text, { maxAliasCount: 100 });
    } catch (err) {
      throw new ConfigError(`not valid YAML or JSON: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`, { file: source });
    }
    const errs: string[] = [];
    const root = object(doc, '', errs);
    known(root, ['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields'], '', errs);
    const apiVersion = ownValue(root, 'apiVersion');
    if (apiVersion !== 'audit.k8s.io/v1') errs.push(`apiVersion: Unsupported value: ${JSON.stringify(apiVersion ?? '')}: supported values: "audit.k8s.io/v1"`);
    if (ownValue(root, 'kind') !== 'Policy') errs.push(`kind: Unsupported value: ${JSON.stringify(ownValue(root, 'kind') ?? '')}: supported values: "Policy"`);
    const omit = stages(ownValue(root, 'omitStages'), 'omitStages', errs) ?? [];
    const omitMF = boolean(ownValue(root, 'omitManagedFields'), 'omitManagedFields', errs) ?? false;
    const rawRules = ownValue(root, 'rules');
    const rules: Rule[] = [];
    if (!Array.isArray(rawRules) || rawRules.length === 0) errs.push('rules: Required value: at least one rule is required');
    else
      rawRules.forEach((r, i) => {
        const rule = parseRule(r, `rules[${i}]`, errs);
        if (rule) rules.push(rule);
      });
    if (errs.length > 0) throw new ConfigError(errs.join('; '), { file: source });
    return new AuditPolicy(rules, omit, omitMF);
  }

  /** The level and stages of a request by `user` (the authenticated user, before impersonation, as kube). */
  decide(user: string, groups: readonly string[], a: AuditRequest): PolicyDecision {
    for (let i = 0; i < this.rules.length; i++) if (matches(this.rules[i]!, user, groups, a)) return this.decisions[i]!;
    return this.none;
  }
}

function matches(r: Rule, user: string, groups: readonly string[], a: AuditRequest): boolean {
  if (r.users.length > 0 && !r.users.includes(user)) return false;
  if (r.userGroups.length > 0 && !groups.some((g) => r.userGroups.includes(g))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  const resourceRule = r.namespaces.length > 0 || r.resources.length > 0;
  if (a.isResourceRequest) {
    if (r.nonResourceURLs.length > 0) return false;
    return resourceRule ? matchesResource(r, a) : true;
  }
  if (resourceRule) return false;
  return r.nonResourceURLs.length > 0 ? r.nonResourceURLs.some((u) => u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1)))) : true;
}

function matchesResource(r: Rule, a: AuditRequest): boolean {
  if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace)) return false;
  if (r.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

function parseRule(raw: unknown, at: string, errs: string[]): Rule | undefined {
  const r = object(raw, at, errs);
  known(r, ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields'], at, errs);
  const level = ownValue(r, 'level');
  if (!(LEVELS as readonly unknown[]).includes(level)) {
    errs.push(
      `${at}.level: ${level === undefined ? 'Required value' : `Unsupported value: ${JSON.stringify(level)}`}: supported values: ${LEVELS.map((l) => `"${l}"`).join(', ')}`,
    );
    return undefined;
  }
  const resources: GroupResources[] = [];
  const rawRes = ownValue(r, 'resources');
  if (rawRes !== undefined && rawRes !== null) {
    if (!Array.isArray(rawRes)) errs.push(`${at}.resources: Invalid value: must be a list`);
    else
      rawRes.forEach((g, i) => {
        const p = `${at}.resources[${i}]`;
        const o = object(g, p, errs);
        known(o, ['group', 'resources', 'resourceNames'], p, errs);
        const group = ownValue(o, 'group') ?? '';
        if (typeof group !== 'string') errs.push(`${p}.group: Invalid value: must be a string`);
        const res = strings(ownValue(o, 'resources'), `${p}.resources`, errs);
        const names = strings(ownValue(o, 'resourceNames'), `${p}.resourceNames`, errs);
        res.forEach((x, j) => {
          // kube's validation: `*/sub`, `res/*`, `res/sub` or `*`; nothing else with a slash or star.
          if (x.includes('/') ? !/^[^/*]+\/[^/]+$|^\*\/[^/*]+$/.test(x) : x.includes('*') && x !== '*') {
            errs.push(`${p}.resources[${j}]: Invalid value: ${JSON.stringify(x)}: must be "*", "*/<subresource>", "<resource>/*" or a resource name`);
          }
        });
        if (names.length > 0 && res.some((x) => x.includes('*')))
          errs.push(`${p}.resourceNames: Invalid value: resourceNames need resources without wildcards`);
        resources.push({ group: typeof group === 'string' ? group : '', resources: res, resourceNames: names });
      });
  }
  const nonResourceURLs = strings(ownValue(r, 'nonResourceURLs'), `${at}.nonResourceURLs`, errs);
  nonResourceURLs.forEach((u, i) => {
    if (!u.startsWith('/')) errs.push(`${at}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: must start with "/"`);
    if (u.slice(0, -1).includes('*')) errs.push(`${at}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: "*" may only end the path`);
  });
  const namespaces = strings(ownValue(r, 'namespaces'), `${at}.namespaces`, errs);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    errs.push(`${at}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
  }
  return {
    level: level as Level,
    users: strings(ownValue(r, 'users'), `${at}.users`, errs),
    userGroups: strings(ownValue(r, 'userGroups'), `${at}.userGroups`, errs),
    verbs: strings(ownValue(r, 'verbs'), `${at}.verbs`, errs),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stages(ownValue(r, 'omitStages'), `${at}.omitStages`, errs),
    omitManagedFields: boolean(ownValue(r, 'omitManagedFields'), `${at}.omitManagedFields`, errs),
  };
}

function object(v: unknown, at: string, errs: string[]): Record<string, unknown> {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  errs.push(`${at || '<root>'}: Invalid value: must be an object`);
  return Object.create(null) as Record<string, unknown>;
}

function known(o: Record<string, unknown>, names: readonly string[], at: string, errs: string[]): void {
  for (const k of Object.keys(o)) if (!names.includes(k)) errs.push(`${at ? `${at}.` : ''}${k}: Invalid value: unknown field`);
}

function strings(v: unknown, at: string, errs: string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) {
    errs.push(`${at}: Invalid value: must be a list of strings`);
    return [];
  }
  return v as string[];
}

function stages(v: unknown, at: string, errs: string[]): Stage[] | undefined {
  if (v === undefined || v === null) return undefined;
  const s = strings(v, at, errs);
  s.forEach((x, i) => {
    if (!(STAGES as readonly string[]).includes(x))
      errs.push(`${at}[${i}]: Unsupported value: ${JSON.stringify(x)}: supported values: ${STAGES.map((l) => `"${l}"`).join(', ')}`);
  });
  return s.filter((x): x is Stage => (STAGES as readonly string[]).includes(x));
}

function boolean(v: unknown, at: string, errs: string[]): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') {
    errs.push(`${at}: Invalid value: must be true or false`);
    return undefined;
  }
  return v;
}
