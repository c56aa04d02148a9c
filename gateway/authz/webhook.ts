// The webhook authorizer: POSTs a SubjectAccessReview (v1 or v1beta1) to a
// remote https service named by a kubeconfig file and reads `status`:
// `allowed: true` → allow; `denied: true` → deny (no later authorizer is
// asked); otherwise no opinion. A failed call, an error status, a timeout or
// an answer that is not a SubjectAccessReview of the version sent is handled
// by the failure policy (NoOpinion: later authorizers decide; Deny: 403).
// Answers are cached per review spec for the authorized/unauthorized TTLs.
import { LRUCache } from 'lru-cache';
import { ConfigError } from '../../lib/config/error.js';
import { clientFromKubeconfig, ClientRequestError, type KubeClient } from '../../lib/kubeconfig/index.js';
import { webhookUrlProblem } from '../../lib/api/webhookurl.js';
import { isPlainObject } from '../../lib/api/meta.js';
import { recordMatchConditionError, recordMatchConditionExclusion, recordWebhookEvaluation } from '../metrics/authz.js';
import type { ConditionResult, MatchConditions } from './matchconditions.js';
import { sarCacheKey, sarSpecV1, toV1beta1 } from './sar.js';
import type { Attributes, Authorizer, Decision, Explanation } from './types.js';
import { NO_OPINION } from './types.js';
import { ownValue } from '../../lib/api/own.js';
import type { Trace } from '../../lib/tracing/span.js';

export const SAR_VERSIONS = ['v1beta1', 'v1'] as const;
export type SarVersion = (typeof SAR_VERSIONS)[number];
export const FAILURE_POLICIES = ['NoOpinion', 'Deny'] as const;
export type FailurePolicy = (typeof FAILURE_POLICIES)[number];

export interface WebhookAuthorizerOptions {
  /** The authorizer's name in the configuration (metrics, logs). */
  readonly name: string;
  readonly version: SarVersion;
  readonly authorizedTtlMs: number;
  readonly unauthorizedTtlMs: number;
  readonly failurePolicy: FailurePolicy;
  readonly matchConditions?: MatchConditions;
  /** AuthorizeWithSelectors: send field and label selectors. */
  readonly withSelectors: boolean;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  /** Cached answers kept at most. */
  readonly cacheSize?: number;
}

interface Cached {
  readonly decision: Decision;
  readonly answer: Record<string, unknown>;
  readonly expiresAt: number;
}

/** What an explanation shows of a webhook's work. */
interface WebhookTrace {
  called: boolean;
  cached: boolean;
  answer?: Record<string, unknown>;
  readonly matchConditions: ConditionResult[];
}

const DEFAULT_CACHE_SIZE = 8192;
const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });

export class WebhookAuthorizer implements Authorizer {
  readonly name: string;
  private readonly apiVersion: string;
  private readonly cache: LRUCache<string, Cached>;
  private readonly clock: () => number;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: WebhookAuthorizerOptions,
  ) {
    this.name = opts.name;
    this.apiVersion = `authorization.k8s.io/${opts.version}`;
    this.clock = opts.clock ?? Date.now;
    this.cache = new LRUCache({ max: opts.cacheSize ?? DEFAULT_CACHE_SIZE });
  }

  /** A cached answer is returned at once (no promise, no microtask turn); match conditions or a call make it a promise. */
  authorize(a: Attributes, trace?: Trace): Decision | Promise<Decision> {
    const mc = this.opts.matchConditions;
    if (mc && mc.size > 0) return this.run(a, trace);
    const key = sarCacheKey(a, this.opts.withSelectors);
    const now = this.clock();
    return this.fresh(key, now)?.decision ?? this.call(a, undefined, key, now, trace);
  }

  /** The decision, and how it was reached: match condition results, cache or call, the answer's status. */
  async explain(a: Attributes): Promise<Explanation> {
    const trace: WebhookTrace = { called: false, cached: false, matchConditions: [] };
    const decision = await this.run(a, undefined, trace);
    const { matchConditions, ...rest } = trace;
    return { decision, facts: { webhook: { ...rest, ...(matchConditions.length > 0 ? { matchConditions } : {}) } } };
  }

  /** `span`: the request's authorization span (the call hangs under it); `trace`: what explain reports. */
  private async run(a: Attributes, span: Trace | undefined, trace?: WebhookTrace): Promise<Decision> {
    const mc = this.opts.matchConditions;
    // Built only when something reads it: match conditions, or a call on a miss.
    const spec = mc && mc.size > 0 ? sarSpecV1(a, this.opts.withSelectors) : undefined;
    if (mc && spec) {
      const m = mc.evaluate(spec, trace?.matchConditions);
      if (m.kind === 'skip') {
        recordMatchConditionExclusion('Webhook', this.name);
        return NO_OPINION;
      }
      if (m.kind === 'error') {
        recordMatchConditionError('Webhook', this.name);
        return this.failure(`match conditions failed: ${m.error}`);
      }
    }
    const key = sarCacheKey(a, this.opts.withSelectors);
    const now = this.clock();
    const hit = this.fresh(key, now);
    if (hit) {
      if (trace) {
        trace.cached = true;
        trace.answer = hit.answer;
      }
      return hit.decision;
    }
    return this.call(a, spec, key, now, span, trace);
  }

  /** The cached answer for `key` while it holds; an expired one is dropped. */
  private fresh(key: string, now: number): Cached | undefined {
    const hit = this.cache.get(key);
    if (hit === undefined || hit.expiresAt > now) return hit;
    this.cache.delete(key);
    return undefined;
  }

  /** Asks the webhook (the spec built unless match conditions built it) and caches the answer under `key`. */
  private async call(
    a: Attributes,
    spec: Record<string, unknown> | undefined,
    key: string,
    now: number,
    span: Trace | undefined,
    trace?: WebhookTrace,
  ): Promise<Decision> {
    spec ??= sarSpecV1(a, this.opts.withSelectors);
    const review = { apiVersion: this.apiVersion, kind: 'SubjectAccessReview', spec: this.opts.version === 'v1' ? spec : toV1beta1(spec) };
    let reply: { status: number; json: unknown };
    const t0 = performance.now();
    if (trace) trace.called = true;
    try {
      reply = await this.client.postJson('', review, span);
    } catch (err) {
      recordWebhookEvaluation(this.name, err instanceof ClientRequestError && err.code === 'timeout' ? 'timeout' : 'error', (performance.now() - t0) / 1000);
      return this.failure(err instanceof Error ? err.message : String(err));
    }
    recordWebhookEvaluation(this.name, reply.status >= 200 && reply.status < 300 ? 'success' : 'error', (performance.now() - t0) / 1000);
    const parsed = this.read(reply);
    if (typeof parsed === 'string') return this.failure(parsed);
    if (trace) trace.answer = parsed.answer;
    const ttl = parsed.decision.kind === 'allow' ? this.opts.authorizedTtlMs : this.opts.unauthorizedTtlMs;
    if (ttl > 0) this.cache.set(key, { decision: parsed.decision, answer: parsed.answer, expiresAt: now + ttl });
    return parsed.decision;
  }

  close(): void {
    this.client.close();
  }

  /** The decision in an answer, or what is wrong with it. */
  private read(reply: { status: number; json: unknown }): { decision: Decision; answer: Record<string, unknown> } | string {
    if (reply.status < 200 || reply.status > 299) return `answered HTTP ${reply.status}`;
    const body = reply.json;
    if (!isPlainObject(body)) return 'the answer is not a JSON object';
    if (body['apiVersion'] !== this.apiVersion || body['kind'] !== 'SubjectAccessReview') {
      return `answered ${JSON.stringify(body['apiVersion'])} ${JSON.stringify(body['kind'])}, want ${this.apiVersion} SubjectAccessReview`;
    }
    const status = ownValue(body, 'status') ?? {};
    if (!isPlainObject(status)) return 'status is not an object';
    // Own members only: the decision must come from the answer, never from a prototype.
    const [allowed, denied, reason, evaluationError] = ['allowed', 'denied', 'reason', 'evaluationError'].map((k) => ownValue(status, k));
    if (allowed !== undefined && typeof allowed !== 'boolean') return 'status.allowed is not a boolean';
    if (denied !== undefined && typeof denied !== 'boolean') return 'status.denied is not a boolean';
    if (typeof evaluationError === 'string' && evaluationError !== '')
      this.opts.log(`authorization webhook "${this.name}": evaluation error: ${evaluationError}`);
    const why = typeof reason === 'string' ? reason : '';
    // The answer as explanations show it: the four fields read, nothing else the peer sent.
    const answer: Record<string, unknown> = { allowed: allowed === true };
    if (denied === true) answer['denied'] = true;
    if (why) answer['reason'] = why;
    if (typeof evaluationError === 'string' && evaluationError !== '') answer['evaluationError'] = evaluationError;
    if (allowed === true) return { decision: why ? { kind: 'allow', reason: why } : ALLOW, answer };
    if (denied === true) return { decision: { kind: 'deny', reason: why }, answer };
    return { decision: { kind: 'no-opinion', reason: why }, answer };
  }

  private failure(why: string): Decision {
    this.opts.log(`authorization webhook "${this.name}" failed (failure policy ${this.opts.failurePolicy}): ${why}`);
    // The cause stays in the log: it may name internal hosts.
    const reason = `authorization webhook "${this.name}" failed`;
    return { kind: this.opts.failurePolicy === 'Deny' ? 'deny' : 'no-opinion', reason, error: reason };
  }
}

/** Builds the webhook's client from its kubeconfig: https only, no user info, query or fragment (kube's webhook URL rules); errors carry `what` (a flag or a field path). */
export async function webhookClient(
  file: string,
  what: string,
  opts: { timeoutMs: number; log: (msg: string) => void; clock?: () => number },
): Promise<KubeClient> {
  let client: KubeClient;
  try {
    client = await clientFromKubeconfig(file, {
      timeoutMs: opts.timeoutMs,
      log: opts.log,
      purpose: 'authorization webhook',
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(`Invalid value: ${JSON.stringify(file)}: ${err.message}`, { field: what });
  }
  const server = client.config.cluster.server;
  let problem: string | undefined;
  const why = webhookUrlProblem(server);
  if (why?.startsWith("'https'")) problem = `the webhook server ${JSON.stringify(server)} must be an https:// URL`;
  else if (why !== undefined) problem = `cluster ${JSON.stringify(client.config.cluster.name)}: server: ${why}`;
  if (problem) {
    client.close();
    throw new ConfigError(`Invalid value: ${JSON.stringify(file)}: ${problem}`, { field: what });
  }
  return client;
}
