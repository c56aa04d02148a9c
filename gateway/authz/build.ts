// Builds the configured authorizers, once per start and once per reload of
// --authorization-config: either the --authorization-mode list (turned into
// the same typed configuration kube-apiserver builds from its flags) or the
// AuthorizationConfiguration file. Expensive parts are made once and shared
// by every chain (the Node graph, RBAC's policy); webhook clients are made
// per configuration. The result is one chain behind a swappable holder,
// after the privileged-group (system:masters) bypass.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import type { ServeOptions } from '../config/flags.js';
import { apiServerIdHash } from '../metrics/registry.js';
import { authzConfigMetrics } from '../metrics/authz.js';
import { loadAbac } from './abac.js';
import { alwaysAllow, alwaysDeny, privilegedGroups } from './always.js';
import { AuthorizerChain } from './chain.js';
import { parseAuthorizationConfig, type AuthorizationConfig, type AuthorizerSpec } from './config.js';
import { instrumented, SwappableAuthorizer } from './instrumented.js';
import { MatchConditions } from './matchconditions.js';
import { startNodeAuthorization, type NodeAuthorization } from './node/index.js';
import { FileReloader } from '../config/filereload.js';
import type { Attributes, Authorizer, ExplainOptions } from './types.js';
import { explainChain, whoCan, type ChainExplanation, type ExplainedPart, type WhoCan } from './explain.js';
import { WebhookAuthorizer, webhookClient } from './webhook.js';

export type AuthzOptions = Pick<
  ServeOptions,
  | 'authorizationModes'
  | 'authorizationConfig'
  | 'authorizationPolicyFile'
  | 'authorizationWebhookConfigFile'
  | 'authorizationWebhookVersion'
  | 'authorizationWebhookCacheAuthorizedTtlMs'
  | 'authorizationWebhookCacheUnauthorizedTtlMs'
  | 'featureGates'
>;

export interface AuthzDeps {
  readonly objects: ObjectSource;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  /** The RBAC authorizer (gateway/authz/rbac, built by the composition root); asked at most once, when a chain names RBAC. */
  readonly rbac?: () => Authorizer | Promise<Authorizer>;
  /** Timeout of the --authorization-webhook-config-file webhook (kube: 30s); a test knob. */
  readonly webhookTimeoutMs?: number;
  /** --authorization-config is re-read this often even without a change event (kube: 60s). */
  readonly pollIntervalMs?: number;
  readonly apiServerId?: string;
  /** Groups allowed everything before any configured authorizer is asked (kube-apiserver: system:masters). */
  readonly privilegedGroups?: readonly string[];
}

export interface BuiltAuthorization {
  /**
   * The privileged-group bypass (deps.privilegedGroups), then the configured chain.
   * `authorize` turns "no opinion" into a denial (403); `evaluate` keeps it (access reviews).
   */
  readonly authorizer: AuthorizerChain;
  /** deps.privilegedGroups: the groups the bypass lets through (for rule listing). */
  readonly privilegedGroups: readonly string[];
  /** The authorizers of the chain in force now, by configured type (for rule listing). */
  current(): readonly ConfiguredAuthorizer[];
  /** The chain in force explained, bypass first (access.gatehouse.dev explanations). */
  explain(attrs: Attributes, opts?: ExplainOptions): Promise<ChainExplanation>;
  /** Who the chain in force allows a request (SubjectsReview); the attributes' user is ignored. */
  whoCan(attrs: Attributes): WhoCan;
  /** Re-reads --authorization-config now; resolves when done (a no-op in flag mode). */
  reload(): Promise<void>;
  close(): void;
}

/** kube-apiserver's names for the authorizers it makes from --authorization-mode. */
function fromFlags(o: AuthzOptions, webhookTimeoutMs: number): AuthorizationConfig {
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

export interface ConfiguredAuthorizer {
  readonly type: AuthorizerSpec['type'];
  readonly name: string;
  readonly authorizer: Authorizer;
}

interface Chain {
  readonly authorizer: Authorizer;
  readonly parts: readonly ConfiguredAuthorizer[];
  close(): void;
}

/** How long a replaced chain's webhook clients live on, so requests already in them can finish. */
const RETIRE_AFTER_MS = 35_000;

export async function buildAuthorizers(o: AuthzOptions, deps: AuthzDeps): Promise<BuiltAuthorization> {
  const withSelectors = o.featureGates.AuthorizeWithSelectors;
  let node: Promise<NodeAuthorization> | undefined;
  let rbac: Promise<Authorizer> | undefined;
  const fromFile = o.authorizationConfig !== undefined;

  const one = async (spec: AuthorizerSpec, i: number, closers: Array<() => void>): Promise<Authorizer> => {
    const at = fromFile ? `authorizers[${i}]` : '--authorization-mode';
    switch (spec.type) {
      case 'AlwaysAllow':
        return alwaysAllow;
      case 'AlwaysDeny':
        return alwaysDeny;
      case 'ABAC':
        if (o.authorizationPolicyFile === undefined) throw new Error(`${at}.type: Invalid value: "ABAC": requires --authorization-policy-file`);
        return loadAbac(o.authorizationPolicyFile);
      case 'Node':
        node ??= startNodeAuthorization(deps.objects, { withSelectors: withSelectors && o.featureGates.AuthorizeNodeWithSelectors, log: deps.log });
        return (await node).authorizer;
      case 'RBAC':
        if (!deps.rbac) throw new Error(`${at}.type: Invalid value: "RBAC": the RBAC authorizer is not available`);
        rbac ??= Promise.resolve(deps.rbac());
        return rbac;
      case 'Webhook': {
        const w = spec.webhook!;
        const what = fromFile ? `${at}.webhook.connectionInfo.kubeConfigFile` : '--authorization-webhook-config-file';
        const client = await webhookClient(w.kubeConfigFile, what, { timeoutMs: w.timeoutMs, log: deps.log, ...(deps.clock ? { clock: deps.clock } : {}) });
        const authorizer = new WebhookAuthorizer(client, {
          name: spec.name,
          version: w.subjectAccessReviewVersion,
          authorizedTtlMs: w.authorizedTtlMs,
          unauthorizedTtlMs: w.unauthorizedTtlMs,
          failurePolicy: w.failurePolicy,
          matchConditions: new MatchConditions(w.matchConditions),
          withSelectors,
          log: deps.log,
          ...(deps.clock ? { clock: deps.clock } : {}),
        });
        closers.push(() => authorizer.close());
        return authorizer;
      }
    }
  };

  const chainOf = async (config: AuthorizationConfig): Promise<Chain> => {
    const closers: Array<() => void> = [];
    try {
      const parts: ConfiguredAuthorizer[] = [];
      for (const [i, spec] of config.authorizers.entries()) parts.push({ type: spec.type, name: spec.name, authorizer: await one(spec, i, closers) });
      const chain = new AuthorizerChain(parts.map((p) => instrumented(p.type, p.name, p.authorizer)));
      return {
        authorizer: { name: 'authorizers', delegates: true, authorize: (a) => chain.evaluate(a) },
        parts: Object.freeze(parts),
        close: () => {
          for (const c of closers) c();
        },
      };
    } catch (err) {
      for (const c of closers) c();
      throw err;
    }
  };

  const closeShared = () => {
    void node?.then(
      (n) => n.close(),
      () => undefined,
    );
  };

  const privileged = deps.privilegedGroups ?? [];
  // The bypass needs no configuration and no RBAC read, so it answers even while the rest starts or reloads.
  const bypass = privileged.length > 0 ? privilegedGroups(privileged) : undefined;
  const withBypass = (configured: Authorizer) => new AuthorizerChain(bypass ? [bypass, configured] : [configured]);
  const bypassPart: ExplainedPart[] = bypass ? [{ type: 'Privileged', name: bypass.name, authorizer: bypass }] : [];
  const explainOf = (parts: () => readonly ConfiguredAuthorizer[]) => (attrs: Attributes, o?: ExplainOptions) =>
    explainChain([...bypassPart, ...parts()], attrs, o);
  const whoCanOf = (parts: () => readonly ConfiguredAuthorizer[]) => (attrs: Attributes) => whoCan([...bypassPart, ...parts()], attrs);

  if (!fromFile) {
    const chain = await chainOf(fromFlags(o, deps.webhookTimeoutMs ?? 30_000)).catch((err: unknown) => {
      closeShared();
      throw err;
    });
    const current = () => chain.parts;
    return {
      authorizer: withBypass(chain.authorizer),
      privilegedGroups: privileged,
      current,
      explain: explainOf(current),
      whoCan: whoCanOf(current),
      reload: async () => undefined,
      close: () => {
        chain.close();
        closeShared();
      },
    };
  }

  const path = o.authorizationConfig!;
  const build = async (text: string): Promise<Chain> => {
    const parsed = parseAuthorizationConfig(text, path);
    if ('error' in parsed) throw new Error(parsed.error);
    try {
      return await chainOf(parsed.config);
    } catch (err) {
      throw new Error(`invalid authorization configuration "${path}": ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`invalid value "${path}" for --authorization-config: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let current = await build(text).catch((err: unknown) => {
    closeShared();
    throw err;
  });
  const holder = new SwappableAuthorizer(current.authorizer);
  const retiring = new Set<NodeJS.Timeout>();
  const controller = new FileReloader<Chain>({
    paths: [path],
    initialTexts: [text],
    what: 'authorization config',
    build: ([t]) => build(t),
    apply: (next) => {
      holder.swap(next.authorizer);
      const old = current;
      current = next;
      const t = setTimeout(() => {
        retiring.delete(t);
        old.close();
      }, RETIRE_AFTER_MS);
      t.unref();
      retiring.add(t);
    },
    metrics: authzConfigMetrics(apiServerIdHash(deps.apiServerId ?? `apiserver-${randomUUID()}`)),
    log: deps.log,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.pollIntervalMs !== undefined ? { pollIntervalMs: deps.pollIntervalMs } : {}),
  });
  controller.start();
  return {
    authorizer: withBypass(holder),
    privilegedGroups: privileged,
    current: () => current.parts,
    explain: explainOf(() => current.parts),
    whoCan: whoCanOf(() => current.parts),
    reload: () => controller.check(),
    close: () => {
      controller.stop();
      for (const t of retiring) clearTimeout(t);
      current.close();
      closeShared();
    },
  };
}
