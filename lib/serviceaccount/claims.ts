// Service-account token claims as kube-apiserver writes and reads them:
// bound tokens (TokenRequest) carry the `kubernetes.io` private claim, legacy
// secret-based tokens the flat `kubernetes.io/serviceaccount/...` claims and
// the fixed issuer `kubernetes/serviceaccount`. Shared by the issuers (core
// backend) and the authenticator (gateway).
import type { UserInfo } from '../api/meta.js';
import { isPlainObject } from '../api/meta.js';

export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
export const DEV_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const SA_USER_PREFIX = 'system:serviceaccount:';
export const SA_GROUP = 'system:serviceaccounts';
export const EXTRA_CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';
export const EXTRA_POD_NAME = 'authentication.kubernetes.io/pod-name';
export const EXTRA_POD_UID = 'authentication.kubernetes.io/pod-uid';
export const EXTRA_NODE_NAME = 'authentication.kubernetes.io/node-name';
export const EXTRA_NODE_UID = 'authentication.kubernetes.io/node-uid';
/** Secret type and annotations of legacy token secrets. */
export const SA_TOKEN_SECRET_TYPE = 'kubernetes.io/service-account-token';
export const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';

const LEGACY = {
  namespace: 'kubernetes.io/serviceaccount/namespace',
  secretName: 'kubernetes.io/serviceaccount/secret.name',
  saName: 'kubernetes.io/serviceaccount/service-account.name',
  saUid: 'kubernetes.io/serviceaccount/service-account.uid',
} as const;

export interface ObjectRef {
  readonly name: string;
  readonly uid: string;
}

/** Who a verified token names, and what it is bound to. */
export interface ServiceAccountIdentity {
  readonly namespace: string;
  readonly serviceAccount: ObjectRef;
  readonly legacy: boolean;
  readonly secret?: ObjectRef | undefined;
  readonly pod?: ObjectRef | undefined;
  readonly node?: ObjectRef | undefined;
  readonly jti?: string | undefined;
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SA_USER_PREFIX}${namespace}:${name}`;
}

export interface BoundClaimsInput {
  issuer: string;
  audiences: readonly string[];
  /** Issue time, ms since the epoch. */
  now: number;
  expirationSeconds: number;
  jti: string;
  namespace: string;
  serviceAccount: ObjectRef;
  pod?: ObjectRef | undefined;
  secret?: ObjectRef | undefined;
  node?: ObjectRef | undefined;
}

/** The payload of a TokenRequest token. */
export function boundClaims(c: BoundClaimsInput): Record<string, unknown> {
  const iat = Math.floor(c.now / 1000);
  const k8s: Record<string, unknown> = { namespace: c.namespace };
  if (c.node) k8s['node'] = { name: c.node.name, uid: c.node.uid };
  if (c.pod) k8s['pod'] = { name: c.pod.name, uid: c.pod.uid };
  if (c.secret) k8s['secret'] = { name: c.secret.name, uid: c.secret.uid };
  k8s['serviceaccount'] = { name: c.serviceAccount.name, uid: c.serviceAccount.uid };
  return {
    aud: [...c.audiences],
    exp: iat + c.expirationSeconds,
    iat,
    iss: c.issuer,
    jti: c.jti,
    'kubernetes.io': k8s,
    nbf: iat,
    sub: serviceAccountUsername(c.namespace, c.serviceAccount.name),
  };
}

/** The payload of a legacy token kept in a `kubernetes.io/service-account-token` secret. */
export function legacyClaims(namespace: string, serviceAccount: ObjectRef, secretName: string): Record<string, unknown> {
  return {
    iss: LEGACY_ISSUER,
    [LEGACY.namespace]: namespace,
    [LEGACY.secretName]: secretName,
    [LEGACY.saName]: serviceAccount.name,
    [LEGACY.saUid]: serviceAccount.uid,
    sub: serviceAccountUsername(namespace, serviceAccount.name),
  };
}

export class ClaimError extends Error {}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string' || v === '') throw new ClaimError(`${what} claim is missing or not a string`);
  return v;
}

function ref(v: unknown, what: string): ObjectRef | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw new ClaimError(`${what} claim is not an object`);
  return { name: str(v['name'], `${what}.name`), uid: str(v['uid'], `${what}.uid`) };
}

/** Reads the identity out of an already verified payload; throws ClaimError when it is incomplete. */
export function identityFromClaims(payload: Record<string, unknown>, legacy: boolean): ServiceAccountIdentity {
  let id: ServiceAccountIdentity;
  if (legacy) {
    id = {
      namespace: str(payload[LEGACY.namespace], LEGACY.namespace),
      serviceAccount: { name: str(payload[LEGACY.saName], LEGACY.saName), uid: str(payload[LEGACY.saUid], LEGACY.saUid) },
      secret: { name: str(payload[LEGACY.secretName], LEGACY.secretName), uid: '' },
      legacy: true,
    };
  } else {
    const k = payload['kubernetes.io'];
    if (!isPlainObject(k)) throw new ClaimError('kubernetes.io claim is missing');
    const sa = ref(k['serviceaccount'], 'kubernetes.io.serviceaccount');
    if (!sa) throw new ClaimError('kubernetes.io.serviceaccount claim is missing');
    const jti = payload['jti'];
    id = {
      namespace: str(k['namespace'], 'kubernetes.io.namespace'),
      serviceAccount: sa,
      legacy: false,
      pod: ref(k['pod'], 'kubernetes.io.pod'),
      secret: ref(k['secret'], 'kubernetes.io.secret'),
      node: ref(k['node'], 'kubernetes.io.node'),
      jti: typeof jti === 'string' && jti !== '' ? jti : undefined,
    };
  }
  const sub = payload['sub'];
  if (sub !== serviceAccountUsername(id.namespace, id.serviceAccount.name)) throw new ClaimError('sub claim does not name the service account of the token');
  return id;
}

/** The user a service-account token authenticates as. */
export function serviceAccountUser(id: ServiceAccountIdentity): UserInfo {
  const extra: Record<string, string[]> = {};
  if (id.pod) {
    extra[EXTRA_POD_NAME] = [id.pod.name];
    extra[EXTRA_POD_UID] = [id.pod.uid];
  }
  if (id.node) {
    extra[EXTRA_NODE_NAME] = [id.node.name];
    extra[EXTRA_NODE_UID] = [id.node.uid];
  }
  if (id.jti) extra[EXTRA_CREDENTIAL_ID] = [`JTI=${id.jti}`];
  return {
    username: serviceAccountUsername(id.namespace, id.serviceAccount.name),
    uid: id.serviceAccount.uid,
    groups: [SA_GROUP, `${SA_GROUP}:${id.namespace}`],
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
