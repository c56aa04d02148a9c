// The Kubernetes authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go):
// `authorizer.group(g).resource(r).subresource(s).namespace(n).name(x)
// .check(verb)`, `authorizer.path(p).check(verb)`, `authorizer.serviceAccount(ns,
// name)`, `fieldSelector` / `labelSelector`, and a Decision's `allowed()`,
// `reason()`, `errored()`, `error()`.
//
// CEL evaluates synchronously and an authorizer may answer later (a webhook,
// a SubjectAccessReview), so a check is answered from the decisions of one
// `AuthorizerSession`: a check not yet decided is recorded and fails the
// evaluation; `session.run(fn)` then asks the authorizer for every recorded
// check and runs `fn` again. An evaluation is a pure function of its inputs
// and the decisions, so a run in which nothing was pending is the answer;
// an error that CEL absorbed (`true || pending`) could not change it.
//
// The values are one-entry maps under a marker key (marker.ts) holding the
// builder's state as JSON; the Authorizer also carries `requestResource`
// (kube declares `authorizer.requestResource` as a variable of its own).
import { celMap, celMethod, CelScalar, isCelMap, type CelFunc, type CelInput, type CelValue } from '@bufbuild/cel';
import type { AuthorizationAttributes, Decision, RequestAuthorizer } from '../api/authorization.js';
import type { UserInfo } from '../api/meta.js';
import { parseFieldSelector, parseLabelSelector, type FieldRequirement, type LabelRequirement } from '../api/selectors.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../registry/names.js';
import { markerKey } from './marker.js';

const AUTHZ_KEY = markerKey('k8s.authz');
const { DYN, STRING, BOOL } = CelScalar;

export const AUTHORIZER_TYPE = 'kubernetes.authorization.Authorizer';
export const PATH_CHECK_TYPE = 'kubernetes.authorization.PathCheck';
export const GROUP_CHECK_TYPE = 'kubernetes.authorization.GroupCheck';
export const RESOURCE_CHECK_TYPE = 'kubernetes.authorization.ResourceCheck';
export const DECISION_TYPE = 'kubernetes.authorization.Decision';

/** A service account the checks are made as (`authorizer.serviceAccount(ns, name)`); absent: the requester. */
type As = readonly [namespace: string, name: string] | null;

type State =
  | { readonly t: 'authorizer'; readonly as: As }
  | { readonly t: 'path'; readonly as: As; readonly path: string }
  | { readonly t: 'group'; readonly as: As; readonly group: string }
  | {
      readonly t: 'resource';
      readonly as: As;
      readonly group: string;
      readonly resource: string;
      readonly subresource: string;
      readonly namespace: string;
      readonly name: string;
      readonly fieldSelector: string;
      readonly labelSelector: string;
    }
  | { readonly t: 'decision'; readonly allowed: boolean; readonly reason: string; readonly error: string };

type ResourceState = Extract<State, { t: 'resource' }>;

function value(s: State): CelValue {
  return celMap(new Map<string, CelInput>([[AUTHZ_KEY, JSON.stringify(s)]]));
}

function stateOf<T extends State['t']>(v: CelValue, t: T): Extract<State, { t: T }> {
  const raw = isCelMap(v) ? v.get(AUTHZ_KEY) : undefined;
  const s = typeof raw === 'string' ? (JSON.parse(raw) as State) : undefined;
  if (s?.t !== t) throw new Error('no such overload');
  return s as Extract<State, { t: T }>;
}

/** One request's checks: its authorizer, the requester, the decisions so far and the checks still to ask. */
export class AuthorizerSession {
  private readonly decisions = new Map<string, Decision>();
  private readonly pending = new Map<string, AuthorizationAttributes>();

  constructor(
    private readonly authorizer: RequestAuthorizer,
    private readonly user: UserInfo,
    /** Rounds of asking before giving up (checks that depend on earlier decisions each need one). */
    private readonly maxRounds = 8,
  ) {}

  /** Runs `fn` (synchronous CEL evaluations) until every check it made has a decision. */
  async run<T>(fn: () => T): Promise<T> {
    for (let round = 0; ; round++) {
      this.pending.clear();
      const previous = active;
      active = this;
      let result: T;
      try {
        result = fn();
      } finally {
        active = previous;
      }
      if (this.pending.size === 0) return result;
      if (round >= this.maxRounds) throw new Error('too many dependent authorization checks');
      const asked = [...this.pending];
      const answers = await Promise.all(asked.map(([, attrs]) => decide(this.authorizer, attrs)));
      asked.forEach(([key], i) => this.decisions.set(key, answers[i]!));
    }
  }

  /** The decision of a check, or undefined (then recorded) when it is still to be asked. */
  decision(attrs: AuthorizationAttributes): Decision | undefined {
    const key = JSON.stringify(attrs);
    const d = this.decisions.get(key);
    if (d === undefined) this.pending.set(key, attrs);
    return d;
  }

  userFor(as: As): UserInfo {
    if (as === null) return this.user;
    const [ns, name] = as;
    return { username: `system:serviceaccount:${ns}:${name}`, uid: '', groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`] };
  }
}

let active: AuthorizerSession | undefined;

/**
 * The parsed selectors of a check, as the gateway's authorizers read them
 * (gateway/authz/types.ts Attributes); one that does not parse is left out,
 * as kube leaves out its requirements.
 */
function selectors(r: ResourceState): { fieldSelector?: readonly FieldRequirement[]; labelSelector?: readonly LabelRequirement[] } {
  const out: { fieldSelector?: readonly FieldRequirement[]; labelSelector?: readonly LabelRequirement[] } = {};
  try {
    if (r.fieldSelector !== '') out.fieldSelector = parseFieldSelector(r.fieldSelector);
  } catch {
    // kube: FieldSelectorParsingErr set, no requirements
  }
  try {
    if (r.labelSelector !== '') out.labelSelector = parseLabelSelector(r.labelSelector).requirements;
  } catch {
    // kube: LabelSelectorParsingErr set, no requirements
  }
  return out;
}

async function decide(authorizer: RequestAuthorizer, attrs: AuthorizationAttributes): Promise<Decision> {
  try {
    return await authorizer.authorize(attrs);
  } catch (err) {
    return { kind: 'no-opinion', reason: '', error: err instanceof Error ? err.message : String(err) };
  }
}

function check(attrs: Omit<AuthorizationAttributes, 'user'>, as: As): CelValue {
  const session = active;
  if (!session) throw new Error('no authorizer in this evaluation');
  const full = { ...attrs, user: session.userFor(as) };
  const d = session.decision(full);
  if (d === undefined) throw new Error('authorization check not yet decided');
  return value({ t: 'decision', allowed: d.kind === 'allow', reason: d.reason, error: d.error ?? '' });
}

/** The `authorizer` variable's value; `requestResource` is the check of the request's own resource. */
export function authorizerValue(requestResource: {
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}): Map<string, CelInput> {
  const r: ResourceState = { t: 'resource', as: null, fieldSelector: '', labelSelector: '', ...requestResource };
  return new Map<string, CelInput>([
    [AUTHZ_KEY, JSON.stringify({ t: 'authorizer', as: null } satisfies State)],
    ['requestResource', value(r)],
  ]);
}

const withResource = (field: 'subresource' | 'namespace' | 'name' | 'fieldSelector' | 'labelSelector') =>
  celMethod(field, DYN, [STRING], DYN, function (this: CelValue, v: string) {
    return value({ ...stateOf(this, 'resource'), [field]: v });
  });

export const authzFunctions: readonly CelFunc[] = [
  celMethod('path', DYN, [STRING], DYN, function (this: CelValue, path: string) {
    const a = stateOf(this, 'authorizer');
    if (path.trim() === '') throw new Error('path must not be empty');
    return value({ t: 'path', as: a.as, path });
  }),
  celMethod('group', DYN, [STRING], DYN, function (this: CelValue, group: string) {
    return value({ t: 'group', as: stateOf(this, 'authorizer').as, group });
  }),
  celMethod('serviceAccount', DYN, [STRING, STRING], DYN, function (this: CelValue, namespace: string, name: string) {
    stateOf(this, 'authorizer');
    if (isDNS1123Subdomain(name).length > 0) throw new Error('Invalid service account name');
    if (isDNS1123Label(namespace).length > 0) throw new Error('Invalid service account namespace');
    return value({ t: 'authorizer', as: [namespace, name] });
  }),
  celMethod('resource', DYN, [STRING], DYN, function (this: CelValue, resource: string) {
    const g = stateOf(this, 'group');
    if (resource.trim() === '') throw new Error('resource must not be empty');
    return value({ t: 'resource', as: g.as, group: g.group, resource, subresource: '', namespace: '', name: '', fieldSelector: '', labelSelector: '' });
  }),
  withResource('subresource'),
  withResource('namespace'),
  withResource('name'),
  withResource('fieldSelector'),
  withResource('labelSelector'),
  celMethod('check', DYN, [STRING], DYN, function (this: CelValue, verb: string) {
    const raw = isCelMap(this) ? this.get(AUTHZ_KEY) : undefined;
    const t = typeof raw === 'string' ? (JSON.parse(raw) as State).t : undefined;
    if (t === 'path') {
      const p = stateOf(this, 'path');
      const attrs = { verb, isResourceRequest: false, path: p.path, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
      return check(attrs, p.as);
    }
    const r = stateOf(this, 'resource');
    const attrs = {
      verb,
      isResourceRequest: true,
      path: '',
      apiGroup: r.group,
      apiVersion: '*',
      namespace: r.namespace,
      resource: r.resource,
      subresource: r.subresource,
      name: r.name,
      ...selectors(r),
    };
    return check(attrs, r.as);
  }),
  celMethod('allowed', DYN, [], BOOL, function (this: CelValue) {
    return stateOf(this, 'decision').allowed;
  }),
  celMethod('reason', DYN, [], STRING, function (this: CelValue) {
    return stateOf(this, 'decision').reason;
  }),
  celMethod('errored', DYN, [], BOOL, function (this: CelValue) {
    return stateOf(this, 'decision').error !== '';
  }),
  celMethod('error', DYN, [], STRING, function (this: CelValue) {
    return stateOf(this, 'decision').error;
  }),
];
