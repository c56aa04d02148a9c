// The gateway's authorizer chain, once per start: the privileged-group
// (system:masters) bypass, then the configured chain — from the
// --authorization-mode list (turned into the same typed configuration
// kube-apiserver builds from its flags) or from the --authorization-config
// file, kept current by reloading.ts. Each mode's authorizer comes from its
// factory (modes.ts); the Node graph and RBAC are made once and shared by
// every chain (shared.ts).
import type { ObjectSource } from '../../lib/api/objectsource.js';
import type { ServeOptions } from '../config/flags.js';
import { privilegedGroups } from './always.js';
import { AuthorizerChain } from './chain.js';
import { configFromFlags } from './config.js';
import { buildChain, type ConfiguredAuthorizer, type ConfiguredChain } from './configured.js';
import { explainChain, whoCan, type ChainExplanation, type ExplainedPart, type WhoCan } from './explain.js';
import { startReloadingChain } from './reloading.js';
import { SharedAuthorizers } from './shared.js';
import type { Attributes, Authorizer, ExplainOptions } from './types.js';

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

/** The configured chain: fixed (flags) or reloading (file). */
interface InForce {
  readonly authorizer: Authorizer;
  current(): ConfiguredChain;
  reload(): Promise<void>;
  close(): void;
}

export async function buildAuthorizers(o: AuthzOptions, deps: AuthzDeps): Promise<BuiltAuthorization> {
  const withSelectors = o.featureGates.AuthorizeWithSelectors;
  const shared = new SharedAuthorizers({
    objects: deps.objects,
    log: deps.log,
    nodeWithSelectors: withSelectors && o.featureGates.AuthorizeNodeWithSelectors,
    rbac: deps.rbac,
  });
  const context = { policyFile: o.authorizationPolicyFile, withSelectors, shared, log: deps.log, clock: deps.clock };

  const inForce = async (): Promise<InForce> => {
    const path = o.authorizationConfig;
    if (path !== undefined) {
      return startReloadingChain({
        path,
        build: (config) => buildChain(config, true, context),
        log: deps.log,
        ...(deps.clock ? { clock: deps.clock } : {}),
        ...(deps.pollIntervalMs !== undefined ? { pollIntervalMs: deps.pollIntervalMs } : {}),
        ...(deps.apiServerId !== undefined ? { apiServerId: deps.apiServerId } : {}),
      });
    }
    const chain = await buildChain(configFromFlags(o, deps.webhookTimeoutMs ?? 30_000), false, context);
    return { authorizer: chain.authorizer, current: () => chain, reload: async () => undefined, close: () => chain.close() };
  };
  const configured = await inForce().catch((err: unknown) => {
    shared.close();
    throw err;
  });

  const privileged = deps.privilegedGroups ?? [];
  // The bypass needs no configuration and no RBAC read, so it answers even while the rest starts or reloads.
  const bypass = privileged.length > 0 ? privilegedGroups(privileged) : undefined;
  const bypassPart: ExplainedPart[] = bypass ? [{ type: 'Privileged', name: bypass.name, authorizer: bypass }] : [];
  const parts = () => configured.current().parts;
  return {
    authorizer: new AuthorizerChain(bypass ? [bypass, configured.authorizer] : [configured.authorizer]),
    privilegedGroups: privileged,
    current: parts,
    explain: (attrs, opts) => explainChain([...bypassPart, ...parts()], attrs, opts),
    whoCan: (attrs) => whoCan([...bypassPart, ...parts()], attrs),
    reload: () => configured.reload(),
    close: () => {
      configured.close();
      shared.close();
    },
  };
}
