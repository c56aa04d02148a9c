// One webhook of a stored configuration, read once per configuration change
// into what a request needs: its parsed rules and selectors, how to reach it
// and what to do when it fails.
import { isPlainObject, type KObject } from '../../../../lib/api/meta.js';
import { at, list, str } from '../../../../lib/registry/fields.js';
import { parseRule, parseSelector, type Matchable, type ParsedSelector } from '../matching/index.js';
import { compileConditions, type CompiledCondition } from './matchconditions.js';

export interface WebhookClientConfig {
  readonly url?: string;
  readonly service?: { readonly namespace: string; readonly name: string; readonly path: string; readonly port: number };
  /** caBundle decoded (PEM); absent = the system roots. */
  readonly caPem?: string;
}

export interface Webhook extends Matchable {
  readonly name: string;
  /** The configuration's name (metrics, errors). */
  readonly configuration: string;
  /** Position in its configuration. */
  readonly index: number;
  /** Position among all the webhooks of its kind, configurations in name order (the audit annotations' index). */
  readonly ordinal: number;
  readonly mutating: boolean;
  readonly namespaceSelector: ParsedSelector;
  readonly objectSelector: ParsedSelector;
  readonly failOpen: boolean;
  /** None or NoneOnDryRun: may be called for a dry-run request. */
  readonly dryRunSafe: boolean;
  readonly timeoutMs: number;
  readonly reviewVersions: readonly string[];
  readonly client: WebhookClientConfig;
  readonly reinvokeIfNeeded: boolean;
  /** matchConditions, compiled. */
  readonly conditions: readonly CompiledCondition[];
}

function clientConfig(cc: unknown): WebhookClientConfig {
  const ca = str(cc, 'caBundle');
  const caPem = ca ? Buffer.from(ca, 'base64').toString('utf8') : undefined;
  const svc = at(cc, 'service');
  const base = caPem ? { caPem } : {};
  if (isPlainObject(svc)) {
    const port = typeof svc['port'] === 'number' ? svc['port'] : 443;
    return { ...base, service: { namespace: str(svc, 'namespace'), name: str(svc, 'name'), path: str(svc, 'path') || '/', port } };
  }
  return { ...base, url: str(cc, 'url') };
}

/** The webhooks of one stored configuration, in order. */
export function webhooksOf(config: KObject, mutating: boolean, first = 0): Webhook[] {
  const configuration = config.metadata.name ?? '';
  return list(config, 'webhooks').map((w, index) => ({
    ordinal: first + index,
    name: str(w, 'name'),
    configuration,
    index,
    mutating,
    rules: list(w, 'rules').map(parseRule),
    equivalent: str(w, 'matchPolicy') !== 'Exact',
    namespaceSelector: safeSelector(at(w, 'namespaceSelector')),
    objectSelector: safeSelector(at(w, 'objectSelector')),
    failOpen: str(w, 'failurePolicy') === 'Ignore',
    dryRunSafe: ['None', 'NoneOnDryRun'].includes(str(w, 'sideEffects')),
    timeoutMs: (typeof at(w, 'timeoutSeconds') === 'number' ? (at(w, 'timeoutSeconds') as number) : 10) * 1000,
    reviewVersions: list(w, 'admissionReviewVersions').filter((v): v is string => typeof v === 'string'),
    client: clientConfig(at(w, 'clientConfig')),
    reinvokeIfNeeded: str(w, 'reinvocationPolicy') === 'IfNeeded',
    conditions: compileConditions(list(w, 'matchConditions').map((c) => ({ name: str(c, 'name'), expression: str(c, 'expression') }))),
  }));
}

/** A selector validated on write cannot fail to parse; one that does (written before validation) matches nothing. */
function safeSelector(json: unknown): ParsedSelector {
  try {
    return parseSelector(json);
  } catch {
    return parseSelector({ matchExpressions: [{ key: 'admission.gatehouse.dev/unparseable-selector', operator: 'Exists' }] });
  }
}
