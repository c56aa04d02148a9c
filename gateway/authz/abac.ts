// ABAC (--authorization-policy-file): one JSON policy per line, in kube's
// format — `{"apiVersion":"abac.authorization.kubernetes.io/v1beta1",
// "kind":"Policy","spec":{...}}` or the legacy unversioned object — matched as
// kube's pkg/auth/authorizer/abac does. Blank lines and `#` lines are
// skipped; anything else that is not a valid policy stops the start with the
// line number.
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../lib/config/error.js';
import { isPlainObject, type UserInfo } from '../../lib/api/meta.js';
import type { Attributes, Authorizer, Decision, Explanation, SubjectGrant } from './types.js';

export interface AbacPolicy {
  readonly user: string;
  readonly group: string;
  readonly readonly: boolean;
  readonly apiGroup: string;
  readonly resource: string;
  readonly namespace: string;
  readonly nonResourcePath: string;
  /** Its line in the file (1-based), for explanations; absent for a policy parsed alone. */
  readonly line?: number;
}

const V1BETA1 = 'abac.authorization.kubernetes.io/v1beta1';
const V0 = 'abac.authorization.kubernetes.io/v0';
const ALL_AUTHENTICATED = 'system:authenticated';
const SPEC_FIELDS = ['user', 'group', 'readonly', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;
const V0_FIELDS = ['user', 'group', 'readonly', 'resource', 'namespace'] as const;

function fields(raw: Record<string, unknown>, allowed: readonly string[], at: string): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!allowed.includes(k)) throw new ConfigError('unknown field', { field: `${at}${k}` });
    if (v === null) continue;
    if (k === 'readonly') {
      if (typeof v !== 'boolean') throw new ConfigError('must be a boolean', { field: `${at}${k}` });
    } else if (typeof v !== 'string') {
      throw new ConfigError('must be a string', { field: `${at}${k}` });
    }
    out[k] = v;
  }
  return out;
}

/** One line (already known to be neither blank nor a comment) → a policy in v1beta1 meaning. */
export function parsePolicyLine(line: string): AbacPolicy {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    throw new ConfigError(`not a JSON object: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isPlainObject(raw)) throw new ConfigError('not a JSON object');
  const s = (f: Record<string, string | boolean>, k: string): string => (typeof f[k] === 'string' ? f[k] : '');
  if ((raw['apiVersion'] === undefined && raw['kind'] === undefined) || raw['apiVersion'] === V0) {
    // Legacy (v0) policy: its defaults are kube's v0 → v1beta1 conversion.
    const { apiVersion: _v, kind, ...rest } = raw;
    if (kind !== undefined && kind !== 'Policy') throw new ConfigError('must be "Policy"', { field: 'kind' });
    const f = fields(rest, V0_FIELDS, '');
    let user = s(f, 'user');
    let group = s(f, 'group');
    const namespace = s(f, 'namespace');
    const resource = s(f, 'resource');
    if (user === '' && group === '') group = ALL_AUTHENTICATED;
    if (user === '*' || group === '*') {
      group = ALL_AUTHENTICATED;
      user = '';
    }
    return Object.freeze({
      user,
      group,
      readonly: f['readonly'] === true,
      apiGroup: '*',
      namespace: namespace || '*',
      resource: resource || '*',
      nonResourcePath: namespace === '' && resource === '' ? '*' : '',
    });
  }
  if (raw['apiVersion'] !== V1BETA1)
    throw new ConfigError(`unsupported value ${JSON.stringify(raw['apiVersion'])} (want "${V1BETA1}" or none)`, { field: 'apiVersion' });
  if (raw['kind'] !== 'Policy') throw new ConfigError('must be "Policy"', { field: 'kind' });
  for (const k of Object.keys(raw)) if (!['apiVersion', 'kind', 'spec'].includes(k)) throw new ConfigError('unknown field', { field: k });
  if (!isPlainObject(raw['spec'])) throw new ConfigError('must be an object', { field: 'spec' });
  const f = fields(raw['spec'], SPEC_FIELDS, 'spec.');
  let user = s(f, 'user');
  let group = s(f, 'group');
  if (user === '*' || group === '*') {
    group = ALL_AUTHENTICATED;
    user = '';
  }
  return Object.freeze({
    user,
    group,
    readonly: f['readonly'] === true,
    apiGroup: s(f, 'apiGroup'),
    resource: s(f, 'resource'),
    namespace: s(f, 'namespace'),
    nonResourcePath: s(f, 'nonResourcePath'),
  });
}

/** The whole file; throws a ConfigError naming the line. */
export function parsePolicyFile(text: string): AbacPolicy[] {
  const out: AbacPolicy[] = [];
  text.split('\n').forEach((line, i) => {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) return;
    try {
      out.push(Object.freeze({ ...parsePolicyLine(t), line: i + 1 }));
    } catch (err) {
      if (err instanceof ConfigError) throw err.within(`line ${i + 1}`);
      throw err;
    }
  });
  return out;
}

function subjectMatches(p: AbacPolicy, u: UserInfo): boolean {
  let matched = false;
  if (p.user !== '') {
    if (p.user === '*') matched = true;
    else if (p.user === u.username) matched = true;
    else return false;
  }
  if (p.group !== '') {
    if (p.group === '*') matched = true;
    else if (u.groups.includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

const READ_ONLY = new Set(['get', 'list', 'watch']);

function matches(p: AbacPolicy, a: Attributes): boolean {
  return subjectMatches(p, a.user) && requestMatches(p, a);
}

/** The policy's non-subject half: verb (readonly), namespace, resource, group, or the path. */
function requestMatches(p: AbacPolicy, a: Attributes): boolean {
  if (p.readonly && !READ_ONLY.has(a.verb)) return false;
  if (a.isResourceRequest) {
    return (
      (p.namespace === '*' || p.namespace === a.namespace) &&
      (p.resource === '*' || p.resource === a.resource) &&
      (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
    );
  }
  const np = p.nonResourcePath;
  if (np === '*' || np === a.path) return true;
  return np.endsWith('*') && a.path.startsWith(np.replace(/\*+$/, ''));
}

const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });
const NO_MATCH: Decision = Object.freeze({ kind: 'no-opinion', reason: 'No policy matched.' });

export class AbacAuthorizer implements Authorizer {
  readonly name = 'ABAC';
  constructor(private readonly policies: readonly AbacPolicy[]) {}

  authorize(a: Attributes): Decision {
    return this.policies.some((p) => matches(p, a)) ? ALLOW : NO_MATCH;
  }

  /**
   * The subjects of every policy whose request half matches: its user, or its
   * group (a policy naming both needs both; listed as the user, the policy
   * shows the group). `*` was read as the group system:authenticated.
   */
  subjects(a: Attributes): SubjectGrant[] {
    const out: SubjectGrant[] = [];
    for (const p of this.policies) {
      if (!requestMatches(p, a)) continue;
      const { line, ...policy } = p;
      const facts = { abac: { ...(line !== undefined ? { line } : {}), policy } };
      if (p.user !== '') out.push({ kind: 'User', name: p.user, facts });
      else if (p.group !== '') out.push({ kind: 'Group', name: p.group, facts });
    }
    return out;
  }

  /** The decision and the first policy that matched, with its line. */
  explain(a: Attributes): Explanation {
    const p = this.policies.find((q) => matches(q, a));
    if (!p) return { decision: NO_MATCH };
    const { line, ...policy } = p;
    return { decision: ALLOW, facts: { abac: { ...(line !== undefined ? { line } : {}), policy } } };
  }
}

/** Reads and parses the policy file; the error names the flag, the file and the line. */
export async function loadAbac(file: string): Promise<AbacAuthorizer> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read the file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { flag: '--authorization-policy-file', value: file });
  }
  try {
    return new AbacAuthorizer(parsePolicyFile(text));
  } catch (err) {
    if (err instanceof ConfigError) throw err.forFlag('--authorization-policy-file', file);
    throw err;
  }
}
