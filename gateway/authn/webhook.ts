// Token webhook (--authentication-token-webhook-*): POSTs a TokenReview
// {spec.token, spec.audiences} to a remote service named by a kubeconfig
// file and reads its status. The answer must have the apiVersion we sent.
// Every way it can go wrong (refusal, error status, timeout, garbage) is a
// failed authentication (AuthnError, details for the log only), never a crash.
// Decisions are cached per token+audiences (CachedTokenAuthenticator).
import { recordTokenWebhook } from '../metrics/authn.js';
import { isPlainObject, type UserInfo } from '../../lib/api/meta.js';
import { ConfigError } from '../../lib/config/error.js';
import { clientFromKubeconfig, type KubeClient } from '../../lib/kubeconfig/index.js';
import { webhookUrlProblem } from '../../lib/api/webhookurl.js';
import { AuthnError, type AuthnResult } from './types.js';
import { CachedTokenAuthenticator } from './tokencache.js';
import type { BearerToken, TokenAuthenticator } from './token.js';
import { ownValue, setOwn } from '../../lib/api/own.js';
import type { Trace } from '../../lib/tracing/span.js';

export const WEBHOOK_VERSIONS = ['v1beta1', 'v1'] as const;
export type WebhookVersion = (typeof WEBHOOK_VERSIONS)[number];

export interface WebhookOptions {
  version: WebhookVersion;
  /** Audiences a token is valid for when the webhook's answer names none (the API server's own). */
  implicitAudiences: readonly string[];
}

function stringList(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return undefined;
  return v as string[];
}

function parseExtra(v: unknown): Record<string, string[]> | undefined | 'bad' {
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) return 'bad';
  const out: Record<string, string[]> = {};
  for (const [k, vals] of Object.entries(v)) {
    const list = stringList(vals);
    if (!list) return 'bad';
    setOwn(out, k, list);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  private readonly apiVersion: string;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: WebhookOptions,
  ) {
    this.apiVersion = `authentication.k8s.io/${opts.version}`;
  }

  private fail(why: string): never {
    throw new AuthnError(this.name, why);
  }

  async authenticateToken(token: BearerToken, audiences: readonly string[], trace?: Trace): Promise<AuthnResult | null> {
    const review = { apiVersion: this.apiVersion, kind: 'TokenReview', spec: { token: token.value, ...(audiences.length > 0 ? { audiences } : {}) } };
    let reply: { status: number; json: unknown };
    const t0 = performance.now();
    try {
      reply = await this.client.postJson('', review, trace);
      recordTokenWebhook(reply.status, (performance.now() - t0) / 1000);
    } catch (err) {
      recordTokenWebhook('<error>', (performance.now() - t0) / 1000);
      return this.fail(`token webhook call failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (reply.status < 200 || reply.status > 299) this.fail(`token webhook answered HTTP ${reply.status}`);
    const body = reply.json;
    if (!isPlainObject(body)) return this.fail('token webhook answer is not a JSON object');
    if (body['kind'] !== 'TokenReview' || body['apiVersion'] !== this.apiVersion) {
      this.fail(`token webhook answered ${JSON.stringify(body['apiVersion'])} ${JSON.stringify(body['kind'])}, want ${this.apiVersion} TokenReview`);
    }
    const status = ownValue(body, 'status');
    if (!isPlainObject(status)) return this.fail('token webhook answer has no status');
    if (ownValue(status, 'authenticated') !== true) {
      // the answer's own member, never a prototype's
      const why = typeof status['error'] === 'string' && status['error'] !== '' ? status['error'] : 'authenticated is false';
      return this.fail(`token webhook refused the token: ${why}`);
    }
    const u = ownValue(status, 'user');
    if (!isPlainObject(u) || typeof u['username'] !== 'string' || u['username'] === '') return this.fail('token webhook answer has no status.user.username');
    const groups = stringList(u['groups']);
    const extra = parseExtra(u['extra']);
    if (!groups || extra === 'bad' || (u['uid'] !== undefined && typeof u['uid'] !== 'string')) this.fail('token webhook answer has a malformed status.user');
    const gotAudiences = stringList(status['audiences']);
    if (!gotAudiences) return this.fail('token webhook answer has a malformed status.audiences');

    // kube-apiserver's rule: an answer without audiences is valid for the API server's own.
    let validFor: readonly string[] | undefined;
    if (audiences.length > 0) {
      const got = gotAudiences.length > 0 ? gotAudiences : this.opts.implicitAudiences;
      validFor = audiences.filter((a) => got.includes(a));
      if (validFor.length === 0) this.fail('token webhook: the token is not valid for any of the requested audiences');
    }
    const user: UserInfo = {
      username: u['username'],
      groups: groups!,
      ...(typeof u['uid'] === 'string' && u['uid'] !== '' ? { uid: u['uid'] } : {}),
      ...(extra ? { extra } : {}),
    };
    return Object.freeze({ user, ...(validFor ? { audiences: validFor } : {}), method: this.name });
  }
}

export interface WebhookConfig {
  configFile: string;
  cacheTtlMs: number;
  version: WebhookVersion;
  apiAudiences: readonly string[];
  /** Per call; kube-apiserver allows a webhook 30 seconds at most. */
  timeoutMs?: number;
  log?: (msg: string) => void;
  clock?: () => number;
}

/** Failed decisions are kept only briefly, so a webhook that recovers is asked again soon. */
export const WEBHOOK_FAILURE_TTL_MS = 10_000;

/** Builds the cached webhook authenticator from its kubeconfig (the client and its agent are made here, once). */
export async function buildWebhookAuthenticator(cfg: WebhookConfig): Promise<{ authenticator: TokenAuthenticator; close(): void }> {
  let client: KubeClient;
  try {
    client = await clientFromKubeconfig(cfg.configFile, {
      timeoutMs: cfg.timeoutMs ?? 10_000,
      purpose: 'token webhook',
      ...(cfg.log ? { log: cfg.log } : {}),
      ...(cfg.clock ? { clock: cfg.clock } : {}),
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.message, { flag: '--authentication-token-webhook-config-file', value: cfg.configFile });
  }
  const problem = webhookUrlProblem(client.config.cluster.server);
  if (problem !== undefined) {
    client.close();
    // The https rule keeps its old words, which configurations and tests already match.
    const why = problem.startsWith("'https'")
      ? 'the server must be an https:// URL'
      : `cluster ${JSON.stringify(client.config.cluster.name)}: server: ${problem}`;
    throw new ConfigError(why, { flag: '--authentication-token-webhook-config-file', value: cfg.configFile });
  }
  const webhook = new WebhookTokenAuthenticator(client, { version: cfg.version, implicitAudiences: cfg.apiAudiences });
  const authenticator =
    cfg.cacheTtlMs > 0
      ? new CachedTokenAuthenticator(webhook, {
          successTtlMs: cfg.cacheTtlMs,
          failureTtlMs: Math.min(cfg.cacheTtlMs, WEBHOOK_FAILURE_TTL_MS),
          ...(cfg.clock ? { clock: cfg.clock } : {}),
        })
      : webhook;
  return { authenticator, close: () => client.close() };
}
