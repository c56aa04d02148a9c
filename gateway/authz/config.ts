// --authorization-config: the AuthorizationConfiguration file
// (apiserver.config.k8s.io/v1, also v1beta1 and v1alpha1), parsed once into
// frozen typed objects. Every problem is reported under its field path in
// kube's words (`authorizers[1].webhook.timeout: Invalid value: "45s": must
// be no more than 30s`), all of them on one line. CEL match conditions are
// compiled here, so a bad expression is a start (or reload) error.
import { isAbsolute } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FieldPath, fieldError } from '../config/fielderrors.js';
import { list, object, string, type Errors } from '../config/authnconfig-read.js';
import { ConfigError } from '../../lib/config/error.js';
import { parseDuration } from '../config/duration.js';
import { CelCompileError, type CompiledExpression } from '../../lib/cel/index.js';
import { MAX_MATCH_CONDITIONS, requestEnvironment } from './matchconditions.js';
import { FAILURE_POLICIES, SAR_VERSIONS, type FailurePolicy, type SarVersion } from './webhook.js';
import type { AuthorizationOptions } from '../config/options/authorization.js';

export const AUTHORIZATION_CONFIG_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1'] as const;
export const AUTHORIZER_TYPES = ['Webhook', 'Node', 'RBAC', 'ABAC', 'AlwaysAllow', 'AlwaysDeny'] as const;
export type AuthorizerType = (typeof AUTHORIZER_TYPES)[number];
export const CONNECTION_TYPES = ['KubeConfigFile', 'InClusterConfig'] as const;
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;

export interface WebhookSpec {
  readonly authorizedTtlMs: number;
  readonly unauthorizedTtlMs: number;
  readonly timeoutMs: number;
  readonly subjectAccessReviewVersion: SarVersion;
  readonly matchConditionSubjectAccessReviewVersion: 'v1';
  readonly failurePolicy: FailurePolicy;
  readonly kubeConfigFile: string;
  readonly matchConditions: readonly CompiledExpression[];
}

export interface AuthorizerSpec {
  readonly type: AuthorizerType;
  readonly name: string;
  readonly webhook?: WebhookSpec;
}

export interface AuthorizationConfig {
  readonly authorizers: readonly AuthorizerSpec[];
}

const LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

function duration(raw: unknown, p: FieldPath, errs: Errors): number | undefined {
  const s = string(raw, p, errs);
  if (s === undefined) return undefined;
  try {
    return parseDuration(s);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    errs.push(fieldError.invalid(p, s, err.reason));
    return undefined;
  }
}

function oneOf<T extends string>(raw: unknown, p: FieldPath, allowed: readonly T[], errs: Errors): T | undefined {
  const s = string(raw, p, errs);
  if (s === undefined || s === '') {
    if (raw === undefined || raw === null || s === '') errs.push(fieldError.required(p));
    return undefined;
  }
  if (!(allowed as readonly string[]).includes(s)) {
    errs.push(fieldError.unsupported(p, s, allowed));
    return undefined;
  }
  return s as T;
}

function validateWebhook(raw: unknown, p: FieldPath, errs: Errors): WebhookSpec | undefined {
  const before = errs.length;
  const w = object(
    raw,
    p,
    [
      'authorizedTTL',
      'unauthorizedTTL',
      'timeout',
      'subjectAccessReviewVersion',
      'matchConditionSubjectAccessReviewVersion',
      'failurePolicy',
      'connectionInfo',
      'matchConditions',
    ],
    errs,
  );
  if (!w) return undefined;
  const ttl = (k: 'authorizedTTL' | 'unauthorizedTTL', dflt: number): number => {
    const v = duration(w[k], p.child(k), errs);
    if (v === undefined || v === 0) return dflt;
    if (v < 0) errs.push(fieldError.invalid(p.child(k), w[k], 'must be greater than 0'));
    return v;
  };
  const authorizedTtlMs = ttl('authorizedTTL', 5 * 60_000);
  const unauthorizedTtlMs = ttl('unauthorizedTTL', 30_000);
  const tp = p.child('timeout');
  const timeoutMs = duration(w['timeout'], tp, errs);
  if (w['timeout'] === undefined || w['timeout'] === null) errs.push(fieldError.required(tp));
  else if (timeoutMs !== undefined && timeoutMs <= 0) errs.push(fieldError.invalid(tp, w['timeout'], 'must be greater than 0'));
  else if (timeoutMs !== undefined && timeoutMs > MAX_WEBHOOK_TIMEOUT_MS) errs.push(fieldError.invalid(tp, w['timeout'], 'must be no more than 30s'));
  const version = oneOf(w['subjectAccessReviewVersion'], p.child('subjectAccessReviewVersion'), SAR_VERSIONS, errs);
  const mcVersion = oneOf(w['matchConditionSubjectAccessReviewVersion'], p.child('matchConditionSubjectAccessReviewVersion'), ['v1'] as const, errs);
  const failurePolicy = oneOf(w['failurePolicy'], p.child('failurePolicy'), FAILURE_POLICIES, errs);

  const cp = p.child('connectionInfo');
  let kubeConfigFile: string | undefined;
  const ci = object(w['connectionInfo'], cp, ['type', 'kubeConfigFile'], errs);
  if (!ci) {
    if (w['connectionInfo'] === undefined || w['connectionInfo'] === null) errs.push(fieldError.required(cp));
  } else {
    const type = oneOf(ci['type'], cp.child('type'), CONNECTION_TYPES, errs);
    const file = string(ci['kubeConfigFile'], cp.child('kubeConfigFile'), errs);
    if (type === 'KubeConfigFile') {
      if (file === undefined || file === '') errs.push(fieldError.required(cp.child('kubeConfigFile')));
      else if (!isAbsolute(file)) errs.push(fieldError.invalid(cp.child('kubeConfigFile'), file, 'must be an absolute path'));
      else kubeConfigFile = file;
    } else if (type === 'InClusterConfig') {
      if (file !== undefined && file !== '') errs.push(fieldError.invalid(cp.child('kubeConfigFile'), file, 'can only be set when type=KubeConfigFile'));
      // The in-cluster configuration would point the API server at itself.
      else errs.push(fieldError.invalid(cp.child('type'), type, "InClusterConfig is not supported for the API server's own authorization webhooks"));
    }
  }

  const mp = p.child('matchConditions');
  const items = list(w['matchConditions'], mp, errs);
  const matchConditions: CompiledExpression[] = [];
  if (items.length > MAX_MATCH_CONDITIONS) errs.push(fieldError.tooMany(mp, items.length, MAX_MATCH_CONDITIONS));
  else {
    const seen = new Set<string>();
    items.forEach((item, i) => {
      const ep = mp.index(i).child('expression');
      const c = object(item, mp.index(i), ['expression'], errs);
      const expr = c ? string(c['expression'], ep, errs) : undefined;
      if (c && (expr === undefined || expr.trim() === '')) {
        if (expr === undefined && c['expression'] !== undefined && c['expression'] !== null) return;
        errs.push(fieldError.required(ep));
        return;
      }
      if (expr === undefined) return;
      if (seen.has(expr)) {
        errs.push(fieldError.duplicate(ep, expr));
        return;
      }
      seen.add(expr);
      try {
        matchConditions.push(requestEnvironment.compile(expr));
      } catch (err) {
        if (!(err instanceof CelCompileError)) throw err;
        errs.push(fieldError.invalid(ep, expr, err.message));
      }
    });
  }
  if (errs.length > before || timeoutMs === undefined || !version || !mcVersion || !failurePolicy || kubeConfigFile === undefined) return undefined;
  return Object.freeze({
    authorizedTtlMs,
    unauthorizedTtlMs,
    timeoutMs,
    subjectAccessReviewVersion: version,
    matchConditionSubjectAccessReviewVersion: mcVersion,
    failurePolicy,
    kubeConfigFile,
    matchConditions: Object.freeze(matchConditions),
  });
}

export function validateAuthorizationConfig(raw: unknown, errs: Errors): AuthorizationConfig | undefined {
  const root = FieldPath.root();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    errs.push('the document must be an object with apiVersion, kind and authorizers');
    return undefined;
  }
  const o = object(raw, root, ['apiVersion', 'kind', 'authorizers'], errs)!;
  const apiVersion = string(o['apiVersion'], root.child('apiVersion'), errs);
  if (!apiVersion) errs.push(fieldError.required(root.child('apiVersion')));
  else if (!(AUTHORIZATION_CONFIG_VERSIONS as readonly string[]).includes(apiVersion))
    errs.push(fieldError.unsupported(root.child('apiVersion'), apiVersion, AUTHORIZATION_CONFIG_VERSIONS));
  const kind = string(o['kind'], root.child('kind'), errs);
  if (kind !== 'AuthorizationConfiguration')
    errs.push(kind ? fieldError.unsupported(root.child('kind'), kind, ['AuthorizationConfiguration']) : fieldError.required(root.child('kind')));

  const ap = root.child('authorizers');
  const items = list(o['authorizers'], ap, errs);
  if (items.length === 0) errs.push(fieldError.required(ap, 'at least one authorization mode must be defined'));
  const authorizers: AuthorizerSpec[] = [];
  const names = new Set<string>();
  const types = new Set<string>();
  items.forEach((item, i) => {
    const p = ap.index(i);
    const a = object(item, p, ['type', 'name', 'webhook'], errs);
    if (!a) {
      if (item === undefined || item === null) errs.push(fieldError.required(p));
      return;
    }
    const type = oneOf(a['type'], p.child('type'), AUTHORIZER_TYPES, errs);
    if (type && type !== 'Webhook') {
      if (types.has(type)) errs.push(fieldError.duplicate(p.child('type'), type));
      types.add(type);
    }
    const name = string(a['name'], p.child('name'), errs);
    if (name === undefined || name === '') {
      if (a['name'] === undefined || a['name'] === null || name === '') errs.push(fieldError.required(p.child('name')));
    } else if (name.length > 63 || !LABEL_RE.test(name)) {
      errs.push(fieldError.invalid(p.child('name'), name, name.length > 63 ? 'must be no more than 63 characters' : LABEL_MSG));
    } else if (names.has(name)) {
      errs.push(fieldError.duplicate(p.child('name'), name));
    } else {
      names.add(name);
    }
    const hasWebhook = a['webhook'] !== undefined && a['webhook'] !== null;
    let webhook: WebhookSpec | undefined;
    if (type === 'Webhook') {
      if (!hasWebhook) errs.push(fieldError.required(p.child('webhook'), 'required when type=Webhook'));
      else webhook = validateWebhook(a['webhook'], p.child('webhook'), errs);
    } else if (type && hasWebhook) {
      errs.push(fieldError.invalid(p.child('webhook'), 'non-null', 'may only be specified when type=Webhook'));
    }
    if (type && name) authorizers.push(Object.freeze({ type, name, ...(webhook ? { webhook } : {}) }));
  });
  if (errs.length > 0) return undefined;
  return Object.freeze({ authorizers: Object.freeze(authorizers) });
}

export type AuthzConfigResult = { readonly config: AuthorizationConfig } | { readonly error: string };

/** Parses and validates the file's text (YAML or JSON); `source` names it in the one-line message. */
export function parseAuthorizationConfig(text: string, source: string): AuthzConfigResult {
  let raw: unknown;
  try {
    raw = parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 });
  } catch (err) {
    return { error: `invalid authorization configuration "${source}": ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  }
  const errs: Errors = [];
  const config = validateAuthorizationConfig(raw, errs);
  if (!config || errs.length > 0) return { error: `invalid authorization configuration "${source}": ${errs.join('; ')}` };
  return { config };
}

/** The --authorization-mode list as the typed configuration kube-apiserver builds from its flags (its names: `node`, `rbac`, `webhook`, …). */
export function configFromFlags(o: AuthorizationOptions, webhookTimeoutMs: number): AuthorizationConfig {
  const authorizers: AuthorizerSpec[] = o.authorizationModes.map((mode): AuthorizerSpec => {
    if (mode !== 'Webhook') return { type: mode, name: mode.toLowerCase() };
    return {
      type: 'Webhook',
      name: 'webhook',
      webhook: {
        authorizedTtlMs: o.authorizationWebhookCacheAuthorizedTtlMs,
        unauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTtlMs,
        timeoutMs: webhookTimeoutMs,
        subjectAccessReviewVersion: o.authorizationWebhookVersion,
        matchConditionSubjectAccessReviewVersion: 'v1',
        // kube's implicit policy for the flag-configured webhook.
        failurePolicy: 'NoOpinion',
        kubeConfigFile: o.authorizationWebhookConfigFile ?? '',
        matchConditions: [],
      },
    };
  });
  return { authorizers };
}
