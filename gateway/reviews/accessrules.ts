// SelfSubjectRulesReview (authorization.k8s.io/v1): the rules the requester
// holds in spec.namespace, gathered from every authorizer of the chain that
// can enumerate its rules (RBAC, AlwaysAllow, system:masters); one that
// cannot (Node, Webhook) makes the answer `incomplete`, as kube's union of
// rule resolvers does. `kubectl auth can-i --list` prints this.
import type { UserInfo } from '../../lib/api/meta.js';
import { badRequest } from '../../lib/api/status.js';
import type { PolicyRule } from '../authz/rbac/types.js';
import type { RequestContext } from '../pipeline/context.js';
import type { CreateAdmission } from '../../lib/api/backend.js';
import { readReview, sendReview, validateReview } from './common.js';

export interface RuleSet {
  readonly rules: readonly PolicyRule[];
  /** The resolver cannot list everything it would allow. */
  readonly incomplete: boolean;
  readonly errors: readonly string[];
}

/** One authorizer's view of a user's rules. */
export type RuleResolver = (user: UserInfo, namespace: string) => RuleSet;

const EVERYTHING: readonly PolicyRule[] = Object.freeze([
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [], nonResourceURLs: [] },
  { verbs: ['*'], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: ['*'] },
]);

export const allRules: RuleResolver = () => ({ rules: EVERYTHING, incomplete: false, errors: [] });
export const noRules: RuleResolver = () => ({ rules: [], incomplete: false, errors: [] });
export const unknownRules =
  (name: string): RuleResolver =>
  () => ({ rules: [], incomplete: true, errors: [`${name} authorizer does not support user rule resolution`] });
export const privilegedRules =
  (groups: readonly string[]): RuleResolver =>
  (user, ns) =>
    user.groups.some((g) => groups.includes(g)) ? allRules(user, ns) : noRules(user, ns);

export interface RulesReviewOptions {
  /** The resolvers of the chain in force (a function: --authorization-config may swap the chain). */
  resolvers: () => readonly RuleResolver[];
  bodyLimit: number;
  /** The CBORServingAndStorage gate. */
  cbor?: boolean;
  /** Admission of the review's create (the core backend's plugins); absent = not admitted. */
  admission?: CreateAdmission | undefined;
}

export async function serveSelfSubjectRulesReview(ctx: RequestContext, opts: RulesReviewOptions): Promise<void> {
  const review = await readReview(ctx, 'SelfSubjectRulesReview', opts.bodyLimit, { admission: opts.admission, cbor: opts.cbor });
  const namespace = review.spec['namespace'];
  if (namespace !== undefined && typeof namespace !== 'string') throw badRequest('SelfSubjectRulesReview.spec.namespace must be a string');
  if (!namespace) throw badRequest('no namespace on request');
  await validateReview(ctx, review, opts.admission);

  const resourceRules: Record<string, unknown>[] = [];
  const nonResourceRules: Record<string, unknown>[] = [];
  const errors: string[] = [];
  let incomplete = false;
  for (const resolve of opts.resolvers()) {
    const set = resolve(ctx.user, namespace);
    incomplete ||= set.incomplete;
    errors.push(...set.errors);
    for (const r of set.rules) {
      if (r.resources.length > 0) {
        resourceRules.push({
          verbs: [...r.verbs],
          ...(r.apiGroups.length ? { apiGroups: [...r.apiGroups] } : {}),
          resources: [...r.resources],
          ...(r.resourceNames.length ? { resourceNames: [...r.resourceNames] } : {}),
        });
      }
      if (r.nonResourceURLs.length > 0) nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
    }
  }
  const status: Record<string, unknown> = { resourceRules, nonResourceRules, incomplete };
  if (errors.length > 0) status['evaluationError'] = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
  sendReview(ctx, review, status);
}

/** The rule resolver of one authorization mode: enumerable modes list their rules, the others make the answer incomplete. */
export function ruleResolverFor(mode: string, authorizer: object): RuleResolver {
  if (mode === 'AlwaysAllow') return allRules;
  if (mode === 'AlwaysDeny') return noRules;
  const lister = authorizer as {
    rulesFor?: (user: UserInfo, namespace: string) => { rules: readonly PolicyRule[]; errors: readonly string[]; incomplete?: boolean };
  };
  if (typeof lister.rulesFor === 'function') {
    const rulesFor = lister.rulesFor.bind(authorizer);
    return (user, ns) => {
      const r = rulesFor(user, ns);
      return { rules: r.rules, errors: r.errors, incomplete: r.incomplete ?? false };
    };
  }
  // kube's Node authorizer cannot enumerate a node's rules and has none for anyone else.
  if (mode === 'Node') return (user, ns) => (user.groups.includes('system:nodes') ? unknownRules('node')(user, ns) : noRules(user, ns));
  return unknownRules(mode.toLowerCase());
}
