// Bootstrap token secrets (type `bootstrap.kubernetes.io/token`, named
// `bootstrap-token-<id>` in kube-system) read by the rules of the spec and of
// kube's bootstrap token helpers. Shared by the authenticator (gateway) and
// the token cleaner and bootstrap signer (core backend).
import type { KObject } from '../api/meta.js';
import { isPlainObject } from '../api/meta.js';

export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_NAMESPACE = 'kube-system';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
/** `<id>.<secret>` as a bearer token. */
export const BOOTSTRAP_TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const ID_RE = /^[a-z0-9]{6}$/;
const SECRET_RE = /^[a-z0-9]{16}$/;
/** bootstrapapi.BootstrapGroupPattern. */
const EXTRA_GROUP_RE = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

export interface BootstrapToken {
  readonly id: string;
  readonly secret: string;
  /** ms since the epoch; undefined = never expires. NaN = unparseable, which counts as expired. */
  readonly expiresAt: number | undefined;
  readonly usages: ReadonlySet<string>;
  /** auth-extra-groups as written (validated only where they are used). */
  readonly extraGroups: readonly string[];
}

/** A string data value of a secret (data is base64, as stored). */
export function secretValue(secret: KObject, key: string): string | undefined {
  const data = secret['data'];
  if (!isPlainObject(data)) return undefined;
  const v = data[key];
  if (typeof v !== 'string') return undefined;
  return Buffer.from(v, 'base64').toString('utf8');
}

export function isBootstrapTokenSecret(secret: KObject): boolean {
  return secret['type'] === BOOTSTRAP_TOKEN_SECRET_TYPE && secret.metadata.namespace === BOOTSTRAP_TOKEN_NAMESPACE;
}

/**
 * The token a secret describes, or a reason it describes none: the id and
 * secret formats, and the id agreeing with the secret's name.
 */
export function parseBootstrapSecret(secret: KObject): BootstrapToken | string {
  if (!isBootstrapTokenSecret(secret)) return `not a ${BOOTSTRAP_TOKEN_SECRET_TYPE} secret in ${BOOTSTRAP_TOKEN_NAMESPACE}`;
  const id = secretValue(secret, 'token-id') ?? '';
  const tokenSecret = secretValue(secret, 'token-secret') ?? '';
  if (!ID_RE.test(id)) return 'token-id is not 6 characters [a-z0-9]';
  if (!SECRET_RE.test(tokenSecret)) return 'token-secret is not 16 characters [a-z0-9]';
  if (secret.metadata.name !== `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`) return `name is not ${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`;
  const exp = secretValue(secret, 'expiration');
  const usages = new Set<string>();
  const data = isPlainObject(secret['data']) ? secret['data'] : {};
  for (const k of Object.keys(data)) {
    if (k.startsWith('usage-bootstrap-') && secretValue(secret, k) === 'true') usages.add(k.slice('usage-bootstrap-'.length));
  }
  const extra = secretValue(secret, 'auth-extra-groups');
  return {
    id,
    secret: tokenSecret,
    usages,
    expiresAt: exp === undefined || exp === '' ? undefined : parseRfc3339(exp),
    extraGroups: extra === undefined || extra === '' ? [] : extra.split(',').map((g) => g.trim()),
  };
}

/** RFC 3339 timestamps as Go's time.RFC3339 reads them; NaN otherwise. */
export function parseRfc3339(s: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s)) return NaN;
  return Date.parse(s);
}

/** Expired, or with an unparseable expiration (kube treats that as expired). */
export function isExpired(token: BootstrapToken, now: number): boolean {
  if (token.expiresAt === undefined) return false;
  return Number.isNaN(token.expiresAt) || token.expiresAt <= now;
}

/** The groups of a token used for authentication; throws on an extra group without the required prefix. */
export function bootstrapGroups(token: BootstrapToken): string[] {
  const groups = new Set([BOOTSTRAPPERS_GROUP]);
  for (const g of token.extraGroups) {
    if (!EXTRA_GROUP_RE.test(g)) throw new Error(`auth-extra-groups: group "${g}" must match ${EXTRA_GROUP_RE.source}`);
    groups.add(g);
  }
  return [...groups].sort();
}
