// What the cluster is asked about a request a route matched: kube-rbac-proxy's
// questions. A non-resource request is the path and the verb of the method;
// a route with resourceAttributes asks about that resource (its fields
// fixed, or filled from the path's captures) with the same verb.
import type { UserInfo } from '../../lib/api/meta.js';
import type { Attributes } from '../authz/types.js';
import { fillTemplate, type RouteMatch } from './table.js';

/** kube-rbac-proxy's verb of a method. */
export function verbOf(method: string | undefined): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return (method ?? '').toLowerCase();
  }
}

export function routeAttributes(m: RouteMatch, user: UserInfo, method: string, path: string): Attributes {
  const verb = verbOf(method);
  const ra = m.route.resourceAttributes;
  if (!ra) return { user, verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
  const c = m.captures;
  return {
    user,
    verb,
    isResourceRequest: true,
    path,
    namespace: fillTemplate(ra.namespace, c),
    apiGroup: fillTemplate(ra.apiGroup, c),
    apiVersion: fillTemplate(ra.apiVersion, c),
    resource: fillTemplate(ra.resource, c),
    subresource: fillTemplate(ra.subresource, c),
    name: fillTemplate(ra.name, c),
  };
}
