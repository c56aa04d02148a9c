// The spec of the SubjectAccessReview family → authorization Attributes,
// with kube's validation (ValidateSubjectAccessReviewSpec): exactly one of
// resourceAttributes and nonResourceAttributes; for SubjectAccessReview a
// user or a group. v1beta1 names the groups `spec.group`.
import { isPlainObject, type UserInfo } from '../../lib/api/meta.js';
import { badRequest, cause, invalid, type StatusCause } from '../../lib/api/status.js';
import type { Attributes } from '../authz/types.js';
import { setOwn } from '../../lib/api/own.js';

export interface AccessSpec {
  readonly resource?: Record<string, unknown>;
  readonly nonResource?: Record<string, unknown>;
}

function str(o: Record<string, unknown>, key: string, field: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw badRequest(`${field}.${key} must be a string`);
  return v;
}

function strings(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw badRequest(`${field} must be a list of strings`);
  return v as string[];
}

function object(v: unknown, field: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw badRequest(`${field} must be an object`);
  return v;
}

/** Reads the attribute blocks; causes of a spec naming neither or both are returned for the caller's 422. */
export function readAccessSpec(spec: Record<string, unknown>): { spec: AccessSpec; causes: StatusCause[] } {
  const resource = object(spec['resourceAttributes'], 'spec.resourceAttributes');
  const nonResource = object(spec['nonResourceAttributes'], 'spec.nonResourceAttributes');
  const causes: StatusCause[] = [];
  if (resource && nonResource)
    causes.push(cause.invalid('spec.nonResourceAttributes', nonResource, 'cannot be specified in combination with resourceAttributes'));
  if (!resource && !nonResource)
    causes.push(cause.invalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  return { spec: { ...(resource ? { resource } : {}), ...(nonResource ? { nonResource } : {}) }, causes };
}

/** The subject of a SubjectAccessReview: user, groups (`group` in v1beta1), extra, uid. */
export function readSubject(spec: Record<string, unknown>, version: string): { user: UserInfo; causes: StatusCause[] } {
  const username = str(spec, 'user', 'spec');
  const groups = strings(spec[version === 'v1beta1' ? 'group' : 'groups'], `spec.${version === 'v1beta1' ? 'group' : 'groups'}`);
  const extraRaw = object(spec['extra'], 'spec.extra') ?? {};
  const extra: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(extraRaw)) setOwn(extra, k, strings(v, `spec.extra[${k}]`));
  const uid = str(spec, 'uid', 'spec');
  const causes = username === '' && groups.length === 0 ? [cause.invalid('spec.user', '', 'at least one of user or group must be specified')] : [];
  return { user: { username, groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) }, causes };
}

export function attributesOf(user: UserInfo, s: AccessSpec): Attributes {
  if (s.resource) {
    const r = s.resource;
    const f = 'spec.resourceAttributes';
    return {
      user,
      isResourceRequest: true,
      path: '',
      verb: str(r, 'verb', f),
      apiGroup: str(r, 'group', f),
      apiVersion: str(r, 'version', f),
      namespace: str(r, 'namespace', f),
      resource: str(r, 'resource', f),
      subresource: str(r, 'subresource', f),
      name: str(r, 'name', f),
    };
  }
  const n = s.nonResource ?? {};
  const f = 'spec.nonResourceAttributes';
  return {
    user,
    isResourceRequest: false,
    path: str(n, 'path', f),
    verb: str(n, 'verb', f),
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
}

export function refuse(kind: string, causes: StatusCause[], group = 'authorization.k8s.io'): void {
  if (causes.length > 0) throw invalid({ group, kind }, '', causes);
}
