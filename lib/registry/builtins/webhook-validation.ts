// Defaults and validation of MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration (admissionregistration.k8s.io/v1), after
// kube's v1 defaults and pkg/apis/admissionregistration/validation: field
// paths and words are kube's. Updates are judged as kube judges them: a rule
// the stored object already broke (side effects, unknown review versions,
// duplicate names) is not enforced on it again, and match conditions that
// did not change are not compiled again.
import type { KObject } from '../../api/meta.js';
import { isPlainObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { validateWebhookUrl } from '../../api/webhookurl.js';
import { at, list, sameJson, str } from '../fields.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../names.js';
import { invalidList, validateLabelSelector, validateMatchConditions, validateRuleWithOperations } from './admissionrules-validation.js';

type Json = Record<string, unknown>;

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const ALL_SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const REINVOCATION = ['IfNeeded', 'Never'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** kube's v1 defaults of each webhook (and of each rule's scope, each service's port). */
export function defaultWebhooks(mutating: boolean): (obj: KObject) => void {
  return (obj) => {
    for (const w of list(obj, 'webhooks')) {
      if (!isPlainObject(w)) continue;
      w['failurePolicy'] ??= 'Fail';
      w['matchPolicy'] ??= 'Equivalent';
      w['namespaceSelector'] ??= {};
      w['objectSelector'] ??= {};
      w['timeoutSeconds'] ??= 10;
      if (mutating) w['reinvocationPolicy'] ??= 'Never';
      for (const r of list(w, 'rules')) if (isPlainObject(r)) r['scope'] ??= '*';
      const svc = at(w, 'clientConfig', 'service');
      if (isPlainObject(svc)) svc['port'] ??= 443;
    }
  };
}

interface Options {
  readonly noSideEffects: boolean;
  readonly knownReviewVersion: boolean;
  readonly uniqueNames: boolean;
  /** Every webhook's matchConditions as stored: not compiled again (kube's ignoreMatchConditions). */
  readonly sameConditions: boolean;
}

function optionsFor(obj: KObject, old: KObject | undefined): Options {
  if (!old) return { noSideEffects: true, knownReviewVersion: true, uniqueNames: true, sameConditions: false };
  const now = list(obj, 'webhooks');
  const hooks = list(old, 'webhooks');
  const names = hooks.map((h) => str(h, 'name'));
  return {
    noSideEffects: hooks.every((h) => NO_SIDE_EFFECTS.includes(str(h, 'sideEffects'))),
    knownReviewVersion: hooks.every((h) => {
      const v = list(h, 'admissionReviewVersions');
      return v.length === 0 || v.some((x) => REVIEW_VERSIONS.includes(String(x)));
    }),
    uniqueNames: new Set(names).size === names.length,
    sameConditions: now.length === hooks.length && now.every((h, i) => sameJson(at(h, 'matchConditions') ?? null, at(hooks[i], 'matchConditions') ?? null)),
  };
}

/** utilvalidation.IsFullyQualifiedName. */
function fullyQualifiedName(path: string, name: string): StatusCause[] {
  if (name === '') return [cause.required(path)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [cause.invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3) return [cause.invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** webhook.ValidateWebhookService. */
function validateService(path: string, svc: Json): StatusCause[] {
  const causes: StatusCause[] = [];
  if (str(svc, 'name') === '') causes.push(cause.required(`${path}.name`, 'service name is required'));
  if (str(svc, 'namespace') === '') causes.push(cause.required(`${path}.namespace`, 'service namespace is required'));
  const port = svc['port'];
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    causes.push(cause.invalid(`${path}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  const p = typeof svc['path'] === 'string' ? svc['path'] : '';
  if (p === '' || p === '/') return causes;
  if (p === '//') return [...causes, cause.invalid(`${path}.path`, p, 'segment[0] may not be empty')];
  if (!p.startsWith('/')) causes.push(cause.invalid(`${path}.path`, p, "must start with a '/'"));
  let rest = p.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') causes.push(cause.invalid(`${path}.path`, p, `segment[${i}] may not be empty`));
    else for (const m of isDNS1123Subdomain(step)) causes.push(cause.invalid(`${path}.path`, p, `segment[${i}]: ${m}`));
  });
  return causes;
}

function validateClientConfig(path: string, cc: unknown): StatusCause[] {
  const c = isPlainObject(cc) ? cc : {};
  const hasUrl = typeof c['url'] === 'string';
  const svc = c['service'];
  if (hasUrl === isPlainObject(svc)) return [cause.required(path, 'exactly one of url or service is required')];
  return hasUrl ? validateWebhookUrl(`${path}.url`, String(c['url'])) : validateService(`${path}.service`, svc as Json);
}

function validateReviewVersions(versions: readonly unknown[], path: string, o: Options): StatusCause[] {
  if (versions.length === 0) return [cause.required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const s = String(v);
    if (seen.has(s)) {
      causes.push(cause.invalid(`${path}[${i}]`, s, 'duplicate version'));
      return;
    }
    seen.add(s);
    for (const m of isDNS1035Label(s)) causes.push(cause.invalid(`${path}[${i}]`, s, m));
  });
  if (o.knownReviewVersion && !versions.some((v) => REVIEW_VERSIONS.includes(String(v))))
    causes.push(invalidList(path, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return causes;
}

function validateWebhook(w: unknown, path: string, mutating: boolean, o: Options): StatusCause[] {
  const h = isPlainObject(w) ? w : {};
  const causes = fullyQualifiedName(`${path}.name`, str(h, 'name'));
  list(h, 'rules').forEach((r, i) => causes.push(...validateRuleWithOperations(r, `${path}.rules[${i}]`)));
  const fp = h['failurePolicy'];
  if (fp !== undefined && !FAILURE_POLICIES.includes(String(fp))) causes.push(cause.notSupported(`${path}.failurePolicy`, fp, FAILURE_POLICIES));
  const mp = h['matchPolicy'];
  if (mp !== undefined && !MATCH_POLICIES.includes(String(mp))) causes.push(cause.notSupported(`${path}.matchPolicy`, mp, MATCH_POLICIES));
  const allowed = o.noSideEffects ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS;
  const se = h['sideEffects'];
  if (se === undefined || se === null) causes.push(cause.required(`${path}.sideEffects`, `must specify one of ${allowed.join(', ')}`));
  else if (!allowed.includes(String(se))) causes.push(cause.notSupported(`${path}.sideEffects`, se, allowed));
  const ts = h['timeoutSeconds'];
  if (typeof ts === 'number' && (ts > 30 || ts < 1))
    causes.push(cause.invalid(`${path}.timeoutSeconds`, ts, 'the timeout value must be between 1 and 30 seconds'));
  causes.push(...validateLabelSelector(h['namespaceSelector'], `${path}.namespaceSelector`));
  causes.push(...validateLabelSelector(h['objectSelector'], `${path}.objectSelector`));
  const rp = h['reinvocationPolicy'];
  if (mutating && rp !== undefined && !REINVOCATION.includes(String(rp))) causes.push(cause.notSupported(`${path}.reinvocationPolicy`, rp, REINVOCATION));
  causes.push(...validateClientConfig(`${path}.clientConfig`, h['clientConfig']));
  // Webhooks' match conditions see the authorizer, never params (kube's OptionalVariableDeclarations for webhooks).
  if (!o.sameConditions)
    causes.push(...validateMatchConditions(list(h, 'matchConditions'), { params: false, authorizer: true, variables: false }, `${path}.matchConditions`));
  return causes;
}

export function validateWebhookConfiguration(mutating: boolean): (obj: KObject, old: KObject | undefined) => StatusCause[] {
  return (obj, old) => {
    const o = optionsFor(obj, old);
    const causes: StatusCause[] = [];
    const names = new Set<string>();
    list(obj, 'webhooks').forEach((w, i) => {
      const path = `webhooks[${i}]`;
      causes.push(...validateWebhook(w, path, mutating, o));
      causes.push(...validateReviewVersions(list(w, 'admissionReviewVersions'), `${path}.admissionReviewVersions`, o));
      const name = str(w, 'name');
      if (o.uniqueNames && name !== '') {
        if (names.has(name)) causes.push(cause.duplicate(`${path}.name`, name));
        names.add(name);
      }
    });
    return causes;
  };
}
