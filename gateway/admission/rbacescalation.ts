// RBAC escalation prevention (kube's policy-based RBAC storage), as an
// admission step on create and update of roles and bindings:
// - a Role or ClusterRole may only grant what the requester already holds at
//   that scope (rule coverage as ConfirmNoEscalation), unless the requester
//   may `escalate` on the role type; an aggregationRule needs `escalate`;
// - a binding may only reference a role whose permissions the requester
//   holds in the binding's scope, unless it may `bind` that role (the
//   role's name may be named in resourceNames).
// PATCH gets the same checks on the object it would produce.
// system:masters skips the checks. The body is read here once and handed on
// to the backend through the RequestContext.
import { isPlainObject } from '../../lib/api/meta.js';
import { forbidden } from '../../lib/api/status.js';
import { decodeObject, readBody } from '../../lib/http/body.js';
import { negotiateInput } from '../../lib/http/negotiate.js';
import type { Attributes, Authorizer } from '../authz/types.js';
import type { RbacAuthorizer } from '../authz/rbac/authorizer.js';
import type { RbacPolicy } from '../authz/rbac/policy.js';
import { describeMissing, uncovered } from '../authz/rbac/covers.js';
import { parseRule, RBAC_GROUP, roleNotFound, roleRefOf, type PolicyRule } from '../authz/rbac/types.js';
import type { AdmissionPlugin } from '../pipeline/admission.js';
import type { RequestContext } from '../pipeline/context.js';
import type { UserInfo } from '../../lib/api/meta.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { objectAfterPatch } from './patched.js';
import type { RegistrySource } from '../../lib/registry/live.js';

export interface RbacEscalationOptions {
  /** Schemas for computing the object a strategic merge patch produces. */
  registry: RegistrySource;
  /** The whole authorizer chain: asked for `escalate` and `bind`. */
  authorizer: Authorizer;
  /** The RBAC rules a user holds (the rule resolver). */
  rbac: RbacAuthorizer;
  policy: RbacPolicy;
  /** The stored objects: an update keeping a ClusterRole's aggregationRule needs no `escalate`. */
  objects: ObjectSource;
  bodyLimit: number;
  /** The CBORServingAndStorage gate: application/cbor bodies are read (off: the 415 of negotiateInput). */
  cbor?: boolean;
  /** Privileged groups (system:masters) that may always escalate. */
  privilegedGroups: readonly string[];
}

const ROLE_TYPES = new Set(['roles', 'clusterroles']);
const BINDING_TYPES = new Set(['rolebindings', 'clusterrolebindings']);

function check(user: UserInfo, verb: string, resource: string, namespace: string, name: string): Attributes {
  return { user, verb, isResourceRequest: true, path: '', apiGroup: RBAC_GROUP, apiVersion: 'v1', namespace, resource, subresource: '', name };
}

/** Go's %q of a []string: `["a" "b"]`. */
const goQuoted = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

export function rbacEscalation(opts: RbacEscalationOptions): AdmissionPlugin {
  const allowed = async (a: Attributes) => (await opts.authorizer.authorize(a)).kind === 'allow';

  const confirmNoEscalation = (ctx: RequestContext, resource: string, name: string, wanted: readonly PolicyRule[]): void => {
    const owned = opts.rbac.rulesFor(ctx.user, ctx.info.namespace);
    const missing = uncovered(owned.rules, wanted);
    if (missing.length === 0) return;
    let why = `user "${ctx.user.username}" (groups=${goQuoted(ctx.user.groups)}) is attempting to grant RBAC permissions not currently held:\n${describeMissing(missing)}`;
    if (owned.errors.length > 0) why += `; resolution errors: [${owned.errors.join(' ')}]`;
    throw forbidden({ group: RBAC_GROUP, resource }, name, why);
  };

  return {
    name: 'RBACEscalation',
    async admit(ctx) {
      const i = ctx.info;
      if (i.apiGroup !== RBAC_GROUP || i.subresource || (i.verb !== 'create' && i.verb !== 'update' && i.verb !== 'patch')) return;
      const isRole = ROLE_TYPES.has(i.resource);
      if (!isRole && !BINDING_TYPES.has(i.resource)) return;
      if (ctx.user.groups.some((g) => opts.privilegedGroups.includes(g))) return;

      const obj =
        i.verb === 'patch'
          ? await objectAfterPatch(ctx, opts.objects, opts.registry, opts.bodyLimit)
          : decodeObject((ctx.body ??= await readBody(ctx.req, opts.bodyLimit)), negotiateInput(ctx.req.headers['content-type'], opts.cbor));
      if (!obj) return; // nothing to patch: the backend answers 404
      const meta = isPlainObject(obj['metadata']) ? obj['metadata'] : {};
      const name = i.name || (typeof meta['name'] === 'string' ? meta['name'] : '');
      const ns = i.namespace;

      if (isRole) {
        if (await allowed(check(ctx.user, 'escalate', i.resource, ns, name))) return;
        const aggregation = obj['aggregationRule'];
        if (
          i.resource === 'clusterroles' &&
          aggregation !== undefined &&
          aggregation !== null &&
          !(await unchangedAggregation(opts.objects, name, aggregation))
        ) {
          throw forbidden({ group: RBAC_GROUP, resource: i.resource }, name, 'must have cluster-admin privileges to use the aggregationRule');
        }
        const rules = Array.isArray(obj['rules']) ? obj['rules'].map(parseRule) : [];
        confirmNoEscalation(ctx, i.resource, name, rules);
        return;
      }

      // Bindings: a missing or malformed roleRef is the backend's validation error.
      const ref = roleRefOf({ ...obj, metadata: {} });
      if (!ref) return;
      if (await allowed(check(ctx.user, 'bind', ref.kind === 'Role' ? 'roles' : 'clusterroles', ns, ref.name))) return;
      const rules = opts.policy.roleRules(ref, ns);
      if (!rules) throw forbidden({ group: RBAC_GROUP, resource: i.resource }, name, roleNotFound(ref));
      confirmNoEscalation(ctx, i.resource, name, rules);
    },
  };
}

/** An update that keeps the stored aggregationRule as it is. */
async function unchangedAggregation(objects: ObjectSource, name: string, aggregation: unknown): Promise<boolean> {
  const old = await objects.get(RBAC_GROUP, 'clusterroles', '', name);
  return old !== undefined && JSON.stringify(old['aggregationRule']) === JSON.stringify(aggregation);
}
