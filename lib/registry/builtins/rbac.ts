// rbac.authorization.k8s.io/v1. Role and binding names only need to be valid
// path segments (names like `system:node` are common), and PUT creates, as
// kube's RBAC strategies allow, so that reconcilers can apply them blindly.
import type { KObject } from '../../api/meta.js';
import { ALL_VERBS, type Column, type ResourceType } from '../types.js';
import { ageColumn, column, createdAtColumn, nameColumn } from '../columns.js';
import { list, str } from '../fields.js';
import { validateBinding } from './rbac-validation.js';

function rbac(kind: string, plural: string, namespaced: boolean, columns: readonly Column[]): ResourceType {
  return {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [],
    nameRule: 'path-segment',
    createOnUpdate: true,
    columns,
    fieldSelectors: {},
  };
}

/** rbac.SubjectsStrings: users, groups and `namespace:name` service accounts. */
function subjects(o: KObject, kind: 'User' | 'Group' | 'ServiceAccount'): string {
  return list(o, 'subjects')
    .filter((s) => str(s, 'kind') === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${str(s, 'namespace')}:${str(s, 'name')}` : str(s, 'name')))
    .join(', ');
}

const ROLE_COLUMNS: readonly Column[] = [nameColumn(), createdAtColumn()];

const BINDING_COLUMNS: readonly Column[] = [
  nameColumn(),
  column(
    'Role',
    'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.',
    (o) => `${str(o, 'roleRef', 'kind')}/${str(o, 'roleRef', 'name')}`,
  ),
  ageColumn(),
  column('Users', 'Users in the roleref', (o) => subjects(o, 'User'), { priority: 1 }),
  column('Groups', 'Groups in the roleref', (o) => subjects(o, 'Group'), { priority: 1 }),
  column('ServiceAccounts', 'ServiceAccounts in the roleref', (o) => subjects(o, 'ServiceAccount'), { priority: 1 }),
];

export const roles = rbac('Role', 'roles', true, ROLE_COLUMNS);
export const rolebindings: ResourceType = {
  ...rbac('RoleBinding', 'rolebindings', true, BINDING_COLUMNS),
  validate: (o, old) => validateBinding(o, old, true),
};
export const clusterroles = rbac('ClusterRole', 'clusterroles', false, ROLE_COLUMNS);
export const clusterrolebindings: ResourceType = {
  ...rbac('ClusterRoleBinding', 'clusterrolebindings', false, BINDING_COLUMNS),
  validate: (o, old) => validateBinding(o, old, false),
};

export const RBAC_TYPES: readonly ResourceType[] = [clusterrolebindings, clusterroles, rolebindings, roles];
