// The RBAC policy in memory: roles by name, and bindings INDEXED BY SUBJECT
// (user name, group name; a service account is its user name
// `system:serviceaccount:<ns>:<name>`), RoleBindings further by namespace. A
// decision visits only the bindings that name the user or one of its groups
// and apply at the request's scope, so its cost does not grow with bindings
// about other subjects.
import type { UserInfo } from '../../../lib/api/meta.js';
import type { Binding, PolicyRule, RoleRef, Subject } from './types.js';

/** One (binding, subject) pair: the subject is what made the binding apply. */
export interface Grant {
  readonly binding: Binding;
  readonly subject: Subject;
}

interface SubjectGrants {
  readonly cluster: Set<Grant>;
  readonly byNamespace: Map<string, Set<Grant>>;
}

/** The visitor sees each applicable grant with its role's rules (undefined = the role does not exist); true stops. */
export type GrantVisitor = (grant: Grant, rules: readonly PolicyRule[] | undefined) => boolean;

const SA_PREFIX = 'system:serviceaccount:';

function bindingId(kind: Binding['kind'], namespace: string, name: string): string {
  return kind === 'RoleBinding' ? `rb/${namespace}/${name}` : `crb/${name}`;
}

/** The scope a binding applies at: every namespace, or its own (a RoleBinding is never cluster-wide, even one with no namespace). */
function scopeKey(kind: Binding['kind'], namespace: string): string {
  return kind === 'ClusterRoleBinding' ? '*' : `ns/${namespace}`;
}

function roleKey(ref: RoleRef): string {
  return `${ref.kind}/${ref.name}`;
}

/** The index key of a subject, or undefined when it can never match (a service account without a namespace). */
function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return `u:${s.name}`;
    case 'Group':
      return `g:${s.name}`;
    case 'ServiceAccount': {
      // kube defaults the namespace of a service-account subject to the RoleBinding's own.
      const ns = s.namespace || bindingNamespace;
      return ns ? `u:${SA_PREFIX}${ns}:${s.name}` : undefined;
    }
  }
}

export class RbacPolicy {
  private readonly roles = new Map<string, readonly PolicyRule[]>();
  private readonly clusterRoles = new Map<string, readonly PolicyRule[]>();
  private readonly bindings = new Map<string, { binding: Binding; grants: Grant[] }>();
  /**
   * Bindings by the scope they apply at (scopeKey), then by role: who-can and
   * other subjects' near misses visit one scope, not every binding, and ask
   * once per role whether it grants the request, not once per binding.
   */
  private readonly byScope = new Map<string, Map<string, { readonly ref: RoleRef; readonly bindings: Map<string, Binding> }>>();
  private readonly bySubject = new Map<string, SubjectGrants>();

  get size(): { roles: number; clusterRoles: number; bindings: number } {
    return { roles: this.roles.size, clusterRoles: this.clusterRoles.size, bindings: this.bindings.size };
  }

  setRole(namespace: string, name: string, rules: readonly PolicyRule[]): void {
    this.roles.set(`${namespace}/${name}`, rules);
  }
  deleteRole(namespace: string, name: string): void {
    this.roles.delete(`${namespace}/${name}`);
  }
  setClusterRole(name: string, rules: readonly PolicyRule[]): void {
    this.clusterRoles.set(name, rules);
  }
  deleteClusterRole(name: string): void {
    this.clusterRoles.delete(name);
  }
  clearRoles(kind: 'Role' | 'ClusterRole'): void {
    (kind === 'Role' ? this.roles : this.clusterRoles).clear();
  }

  /** The rules of a role reference as seen from a binding in `namespace` ('' for ClusterRoleBindings). */
  roleRules(ref: RoleRef, namespace: string): readonly PolicyRule[] | undefined {
    return ref.kind === 'ClusterRole' ? this.clusterRoles.get(ref.name) : this.roles.get(`${namespace}/${ref.name}`);
  }

  setBinding(b: Binding): void {
    this.deleteBinding(b.kind, b.namespace, b.name);
    const grants: Grant[] = [];
    for (const subject of b.subjects) {
      const key = subjectKey(subject, b.namespace);
      if (key === undefined) continue;
      const grant: Grant = { binding: b, subject };
      let sg = this.bySubject.get(key);
      if (!sg) {
        sg = { cluster: new Set(), byNamespace: new Map() };
        this.bySubject.set(key, sg);
      }
      if (b.kind === 'ClusterRoleBinding') sg.cluster.add(grant);
      else {
        let set = sg.byNamespace.get(b.namespace);
        if (!set) {
          set = new Set();
          sg.byNamespace.set(b.namespace, set);
        }
        set.add(grant);
      }
      grants.push(grant);
    }
    const id = bindingId(b.kind, b.namespace, b.name);
    this.bindings.set(id, { binding: b, grants });
    const sk = scopeKey(b.kind, b.namespace);
    let scope = this.byScope.get(sk);
    if (!scope) this.byScope.set(sk, (scope = new Map()));
    const rk = roleKey(b.roleRef);
    let byRole = scope.get(rk);
    if (!byRole) scope.set(rk, (byRole = { ref: b.roleRef, bindings: new Map() }));
    byRole.bindings.set(id, b);
  }

  deleteBinding(kind: Binding['kind'], namespace: string, name: string): void {
    const id = bindingId(kind, namespace, name);
    const entry = this.bindings.get(id);
    if (!entry) return;
    this.bindings.delete(id);
    const sk = scopeKey(kind, namespace);
    const scope = this.byScope.get(sk);
    const rk = roleKey(entry.binding.roleRef);
    const byRole = scope?.get(rk);
    byRole?.bindings.delete(id);
    if (byRole?.bindings.size === 0) scope!.delete(rk);
    if (scope?.size === 0) this.byScope.delete(sk);
    for (const grant of entry.grants) {
      const key = subjectKey(grant.subject, namespace)!;
      const sg = this.bySubject.get(key);
      if (!sg) continue;
      if (kind === 'ClusterRoleBinding') sg.cluster.delete(grant);
      else {
        const set = sg.byNamespace.get(namespace);
        set?.delete(grant);
        if (set && set.size === 0) sg.byNamespace.delete(namespace);
      }
      if (sg.cluster.size === 0 && sg.byNamespace.size === 0) this.bySubject.delete(key);
    }
  }

  clearBindings(kind: Binding['kind']): void {
    for (const { binding } of [...this.bindings.values()]) {
      if (binding.kind === kind) this.deleteBinding(kind, binding.namespace, binding.name);
    }
  }

  /**
   * Visits the grants that apply to the user at a scope: ClusterRoleBindings
   * first, then the RoleBindings of `namespace` (none for cluster-scoped
   * requests), as kube's rule resolver does. Stops when the visitor says so.
   */
  visit(user: UserInfo, namespace: string, visitor: GrantVisitor): void {
    const found = this.grantsOf(user);
    for (const sg of found) {
      for (const grant of sg.cluster) if (visitor(grant, this.roleRules(grant.binding.roleRef, ''))) return;
    }
    if (!namespace) return;
    for (const sg of found) {
      const set = sg.byNamespace.get(namespace);
      if (!set) continue;
      for (const grant of set) if (visitor(grant, this.roleRules(grant.binding.roleRef, namespace))) return;
    }
  }

  /** Every grant of the user, whatever its scope: ClusterRoleBindings, then RoleBindings of every namespace (explanations' near misses). */
  visitEverywhere(user: UserInfo, visitor: GrantVisitor): void {
    const found = this.grantsOf(user);
    for (const sg of found) {
      for (const grant of sg.cluster) if (visitor(grant, this.roleRules(grant.binding.roleRef, ''))) return;
    }
    for (const sg of found) {
      for (const [ns, set] of sg.byNamespace) {
        for (const grant of set) if (visitor(grant, this.roleRules(grant.binding.roleRef, ns))) return;
      }
    }
  }

  /**
   * Every binding that applies at a scope, whoever it names: ClusterRoleBindings,
   * then the RoleBindings of `namespace` (who-can), grouped by role. With
   * `wanted`, the bindings of a role it refuses (given the role's rules,
   * undefined when the role does not exist) are not visited.
   */
  visitBindings(
    namespace: string,
    visitor: (binding: Binding, rules: readonly PolicyRule[] | undefined) => void,
    wanted?: (rules: readonly PolicyRule[] | undefined) => boolean,
  ): void {
    this.visitScope(scopeKey('ClusterRoleBinding', ''), '', visitor, wanted);
    if (namespace) this.visitScope(scopeKey('RoleBinding', namespace), namespace, visitor, wanted);
  }

  private visitScope(
    key: string,
    namespace: string,
    visitor: (binding: Binding, rules: readonly PolicyRule[] | undefined) => void,
    wanted?: (rules: readonly PolicyRule[] | undefined) => boolean,
  ): void {
    const scope = this.byScope.get(key);
    if (!scope) return;
    for (const { ref, bindings } of scope.values()) {
      const rules = this.roleRules(ref, namespace);
      if (wanted && !wanted(rules)) continue;
      for (const binding of bindings.values()) visitor(binding, rules);
    }
  }

  private grantsOf(user: UserInfo): SubjectGrants[] {
    const found: SubjectGrants[] = [];
    const mine = this.bySubject.get(`u:${user.username}`);
    if (mine) found.push(mine);
    for (const g of user.groups) {
      const sg = this.bySubject.get(`g:${g}`);
      if (sg) found.push(sg);
    }
    return found;
  }
}
