// RBAC escalation prevention (kube's policy-based RBAC storage), as a
// validating plugin on creates and updates of roles and bindings, judging
// the object the store will keep (a PATCH or an apply by the object it produced):
// - a Role or ClusterRole may only grant what the requester already holds at
//   that scope (rule coverage as ConfirmNoEscalation), unless the requester
//   may `escalate` on the role type; an aggregationRule needs `escalate`
//   unless the update keeps the stored one;
// - a binding may only reference a role whose permissions the requester
//   holds in the binding's scope, unless it may `bind` that role (the
//   role's name may be named in resourceNames).
// The privileged groups (system:masters) skip the checks.
import type { AuthorizationAttributes, RequestAuthorizer } from '../../../lib/api/authorization.js';
import type { UserInfo } from '../../../lib/api/meta.js';
import { forbidden } from '../../../lib/api/status.js';
import { describeMissing, uncovered } from '../../../lib/rbac/covers.js';
import type { RbacRuleResolver } from '../../../lib/rbac/rules.js';
import { parseRule, RBAC_GROUP, roleNotFound, roleRefOf, type PolicyRule } from '../../../lib/rbac/types.js';
import type { AdmissionAttributes, ValidatingPlugin } from './types.js';

export interface RbacEscalationOptions {
  /** The whole authorizer chain: asked for `escalate` and `bind`. */
  readonly authorizer: RequestAuthorizer;
  /** The RBAC rules a user holds, and those a role reference names. */
  readonly rules: RbacRuleResolver;
  /** Privileged groups (system:masters) that may always escalate. */
  readonly privilegedGroups: readonly string[];
}

const ROLE_TYPES = new Set(['roles', 'clusterroles']);
const BINDING_TYPES = new Set(['rolebindings', 'clusterrolebindings']);

function check(user: UserInfo, verb: string, resource: string, namespace: string, name: string): AuthorizationAttributes {
  return { user, verb, isResourceRequest: true, path: '', apiGroup: RBAC_GROUP, apiVersion: 'v1', namespace, resource, subresource: '', name };
}

/** Go's %q of a []string: `["a" "b"]`. */
const goQuoted = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

export function rbacEscalation(opts: RbacEscalationOptions): ValidatingPlugin {
  const allowed = async (a: AuthorizationAttributes) => (await opts.authorizer.authorize(a)).kind === 'allow';

  const confirmNoEscalation = (a: AdmissionAttributes, wanted: readonly PolicyRule[]): void => {
    const owned = opts.rules.rulesFor(a.user, a.namespace);
    const missing = uncovered(owned.rules, wanted);
    if (missing.length === 0) return;
    let why = `user "${a.user.username}" (groups=${goQuoted(a.user.groups)}) is attempting to grant RBAC permissions not currently held:\n${describeMissing(missing)}`;
    if (owned.errors.length > 0) why += `; resolution errors: [${owned.errors.join(' ')}]`;
    throw forbidden({ group: RBAC_GROUP, resource: a.resource.resource }, a.name, why);
  };

  const judge = async (a: AdmissionAttributes, resource: string, isRole: boolean): Promise<void> => {
    const obj = a.object!;
    const { name, namespace } = a;

    if (isRole) {
      if (await allowed(check(a.user, 'escalate', resource, namespace, name))) return;
      const aggregation = obj['aggregationRule'];
      const keepsAggregation = a.oldObject !== undefined && JSON.stringify(a.oldObject['aggregationRule']) === JSON.stringify(aggregation);
      if (resource === 'clusterroles' && aggregation !== undefined && aggregation !== null && !keepsAggregation) {
        throw forbidden({ group: RBAC_GROUP, resource }, name, 'must have cluster-admin privileges to use the aggregationRule');
      }
      const rules = Array.isArray(obj['rules']) ? obj['rules'].map(parseRule) : [];
      confirmNoEscalation(a, rules);
      return;
    }

    // Bindings: a missing or malformed roleRef was refused by validation already.
    const ref = roleRefOf({ ...obj, metadata: {} });
    if (!ref) return;
    if (await allowed(check(a.user, 'bind', ref.kind === 'Role' ? 'roles' : 'clusterroles', namespace, ref.name))) return;
    const rules = opts.rules.roleRules(ref, namespace);
    if (!rules) throw forbidden({ group: RBAC_GROUP, resource }, name, roleNotFound(ref));
    confirmNoEscalation(a, rules);
  };

  return {
    name: 'RBACEscalation',
    // Synchronous for every write that is not a role or binding (run.ts awaits only a promise).
    validate(a) {
      const resource = a.resource.resource;
      if (a.resource.group !== RBAC_GROUP || a.subresource || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      const isRole = ROLE_TYPES.has(resource);
      if (!isRole && !BINDING_TYPES.has(resource)) return;
      if (a.user.groups.some((g) => opts.privilegedGroups.includes(g))) return;
      return judge(a, resource, isRole);
    },
  };
}
