// claimMappings → UserInfo, then userValidationRules. Usernames are never
// empty and never start with `system:` (those belong to the cluster).
import type { UserInfo } from '../../../lib/api/meta.js';
import { kindOf, stringList, type CelInput, type CompiledExpression } from '../../../lib/cel/index.js';
import type { ClaimMappings, UserValidationRule } from '../../config/authnconfig-types.js';
import { setOwn } from '../../../lib/api/own.js';

type Claims = Readonly<Record<string, unknown>>;

function stringClaim(claims: Claims, name: string): string {
  const v = claims[name];
  if (v === undefined) throw new Error(`claim ${JSON.stringify(name)} not present`);
  if (typeof v !== 'string') throw new Error(`claim ${JSON.stringify(name)} is not a string`);
  return v;
}

/** A string or a list of strings (kube accepts both for groups). */
function stringsClaim(claims: Claims, name: string): string[] {
  const v = claims[name];
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw new Error(`claim ${JSON.stringify(name)} must be a string or an array of strings`);
}

function stringResult(e: CompiledExpression, claims: CelInput, what: string): string {
  const v = e.evaluate({ claims });
  if (typeof v !== 'string') throw new Error(`${what} expression must return a string, got ${kindOf(v)}`);
  return v;
}

function stringsResult(e: CompiledExpression, claims: CelInput, what: string): string[] {
  const v = e.evaluate({ claims });
  if (typeof v === 'string') return v === '' ? [] : [v];
  if (v === null) return [];
  const list = stringList(v);
  if (!list) throw new Error(`${what} expression must return a string or a list of strings, got ${kindOf(v)}`);
  return list;
}

export function mapUser(m: ClaimMappings, claims: Claims, celClaims: () => CelInput): UserInfo {
  let username: string;
  if ('claim' in m.username) {
    const raw = stringClaim(claims, m.username.claim);
    if (m.username.claim === 'email' && claims.email_verified !== undefined) {
      // If email_verified is present it must be true (OpenID Connect Core, standard claims).
      if (typeof claims.email_verified !== 'boolean') throw new Error('claim "email_verified" is not a boolean');
      if (!claims.email_verified) throw new Error('email not verified');
    }
    if (raw === '') throw new Error(`claim ${JSON.stringify(m.username.claim)} is empty`);
    username = m.username.prefix + raw;
  } else {
    username = stringResult(m.username.expression, celClaims(), 'username');
    if (username === '') throw new Error('empty username via CEL expression is not allowed');
  }
  if (username.startsWith('system:')) throw new Error(`username ${JSON.stringify(username)} must not start with "system:"`);

  let groups: string[] = [];
  if (m.groups) {
    groups =
      'claim' in m.groups
        ? stringsClaim(claims, m.groups.claim).map((g) => (m.groups as { prefix: string }).prefix + g)
        : stringsResult(m.groups.expression, celClaims(), 'groups');
  }

  let uid: string | undefined;
  if (m.uid) uid = 'claim' in m.uid ? stringClaim(claims, m.uid.claim) : stringResult(m.uid.expression, celClaims(), 'uid');

  let extra: Record<string, string[]> | undefined;
  for (const x of m.extra) {
    const values = stringsResult(x.valueExpression, celClaims(), `extra ${JSON.stringify(x.key)}`);
    if (values.length === 0) continue;
    setOwn((extra ??= {}), x.key, values);
  }
  return { username, groups, ...(uid !== undefined && uid !== '' ? { uid } : {}), ...(extra ? { extra } : {}) };
}

export function checkUser(rules: readonly UserValidationRule[], user: UserInfo): void {
  if (rules.length === 0) return;
  const extra = new Map<string, CelInput>(Object.entries(user.extra ?? {}));
  const bound = new Map<string, CelInput>([
    ['username', user.username],
    ['uid', user.uid ?? ''],
    ['groups', user.groups],
    ['extra', extra],
  ]);
  for (const rule of rules) {
    const v = rule.expression.evaluate({ user: bound });
    if (typeof v !== 'boolean') throw new Error(`user validation expression must return a boolean, got ${kindOf(v)}`);
    if (!v) throw new Error(`user validation rule failed: ${rule.message ?? `expression ${JSON.stringify(rule.expression.expression)} is false`}`);
  }
}
