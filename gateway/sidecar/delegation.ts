// The cluster decides for the sidecar: bearer tokens through its TokenReview
// (with client certificates from --client-ca-file beside them), requests
// through its SubjectAccessReview (a failed call never lets through: 500). Each reached by a
// webhook kubeconfig (--authentication-token-webhook-config-file,
// --authorization-webhook-config-file) or, for either one left out, the
// pod's in-cluster configuration. The sidecar's own identity needs `create`
// on tokenreviews and subjectaccessreviews (system:auth-delegator).
import type { ServeOptions } from '../config/flags.js';
import { KubeClient } from '../../lib/kubeconfig/index.js';
import { X509Authenticator } from '../authn/x509.js';
import type { CurrentCaBundle } from '../authn/certchain.js';
import { BearerAuthenticator, type TokenAuthenticator } from '../authn/token.js';
import { buildWebhookAuthenticator, WebhookTokenAuthenticator } from '../authn/webhook.js';
import { CachedTokenAuthenticator } from '../authn/tokencache.js';
import { UnionAuthenticator } from '../authn/union.js';
import type { Authenticator } from '../authn/types.js';
import { WebhookAuthorizer, webhookClient } from '../authz/webhook.js';
import type { Authorizer } from '../authz/types.js';
import { inClusterConfig } from './config.js';
import { loadKubeconfig, type ClientConfig } from '../../lib/kubeconfig/index.js';
import { TokenUnion } from '../authn/token.js';
import { startOidc } from '../authn/jwt/start.js';

export interface DelegationContext {
  readonly env: NodeJS.ProcessEnv;
  readonly log: (msg: string) => void;
  readonly clock: () => number;
  /** Closers of the clients made, run at shutdown. */
  readonly closers: Array<() => void>;
}

/**
 * The cluster a review goes to without a webhook kubeconfig: --kubeconfig
 * (kube-rbac-proxy's: an ordinary kubeconfig, the review's path added to
 * its server), else the pod's in-cluster configuration.
 */
async function clusterFor(opts: ServeOptions, path: string, d: DelegationContext, what: string): Promise<ClientConfig> {
  if (opts.kubeconfigFile === undefined) return inClusterConfig(path, d.env, what);
  const c = await loadKubeconfig(opts.kubeconfigFile);
  return Object.freeze({ ...c, cluster: Object.freeze({ ...c.cluster, server: `${c.cluster.server.replace(/\/+$/, '')}${path}` }) });
}

/** Bearer tokens: OIDC (--oidc-*, the gateway's verifier, checked here) first when configured, then the cluster's TokenReview. */
export async function delegatedTokens(opts: ServeOptions, d: DelegationContext): Promise<TokenAuthenticator> {
  const review = await tokenReview(opts, d);
  const oidc = await startOidc(opts, { log: d.log, clock: d.clock, apiAudiences: opts.apiAudiences, serviceAccountIssuers: opts.serviceAccountIssuers });
  if (!oidc) return review;
  d.closers.push(oidc.close);
  d.log('sidecar: OIDC tokens verified here, others through TokenReview');
  return new TokenUnion([oidc.authenticator, review]);
}

/** The cluster's TokenReview (cached for --authentication-token-webhook-cache-ttl). */
async function tokenReview(opts: ServeOptions, d: DelegationContext): Promise<TokenAuthenticator> {
  const { log, clock } = d;
  if (opts.authenticationTokenWebhookConfigFile) {
    const w = await buildWebhookAuthenticator({
      configFile: opts.authenticationTokenWebhookConfigFile,
      cacheTtlMs: opts.authenticationTokenWebhookCacheTtlMs,
      version: opts.authenticationTokenWebhookVersion,
      apiAudiences: opts.apiAudiences,
      log,
      clock,
    });
    d.closers.push(w.close);
    return w.authenticator;
  }
  const config = await clusterFor(opts, '/apis/authentication.k8s.io/v1/tokenreviews', d, '--authentication-token-webhook-config-file');
  const client = new KubeClient(config, { timeoutMs: 10_000, log, clock, purpose: 'token webhook' });
  d.closers.push(() => client.close());
  log(
    `sidecar: TokenReview through ${opts.kubeconfigFile ? `--kubeconfig ${opts.kubeconfigFile}` : 'the in-cluster configuration'} (${client.config.cluster.server})`,
  );
  const webhook = new WebhookTokenAuthenticator(client, { version: 'v1', implicitAudiences: opts.apiAudiences });
  const ttl = opts.authenticationTokenWebhookCacheTtlMs;
  return ttl > 0 ? new CachedTokenAuthenticator(webhook, { successTtlMs: ttl, failureTtlMs: Math.min(ttl, 10_000), clock }) : webhook;
}

/** Client certificates, then bearer tokens; anonymous is always 401 (as kube-rbac-proxy), whatever --anonymous-auth. */
export function delegatedAuthentication(opts: ServeOptions, clientCa: CurrentCaBundle, tokens: TokenAuthenticator, d: DelegationContext): UnionAuthenticator {
  const authenticators: Authenticator[] = [];
  if (clientCa.current.anchors.length > 0) authenticators.push(new X509Authenticator({ cas: clientCa, clock: d.clock }));
  authenticators.push(new BearerAuthenticator(tokens, opts.apiAudiences));
  return new UnionAuthenticator(authenticators, { anonymous: false, log: d.log });
}

export async function delegatedAuthorization(opts: ServeOptions, d: DelegationContext): Promise<Authorizer> {
  const { log, clock } = d;
  let client: KubeClient;
  let version = opts.authorizationWebhookVersion;
  if (opts.authorizationWebhookConfigFile) {
    client = await webhookClient(opts.authorizationWebhookConfigFile, '--authorization-webhook-config-file', { timeoutMs: 10_000, log, clock });
  } else {
    client = new KubeClient(await clusterFor(opts, '/apis/authorization.k8s.io/v1/subjectaccessreviews', d, '--authorization-webhook-config-file'), {
      timeoutMs: 10_000,
      log,
      clock,
      purpose: 'authorization webhook',
    });
    version = 'v1';
    log(
      `sidecar: SubjectAccessReview through ${opts.kubeconfigFile ? `--kubeconfig ${opts.kubeconfigFile}` : 'the in-cluster configuration'} (${client.config.cluster.server})`,
    );
  }
  d.closers.push(() => client.close());
  return new WebhookAuthorizer(client, {
    name: 'webhook',
    version,
    authorizedTtlMs: opts.authorizationWebhookCacheAuthorizedTtlMs,
    unauthorizedTtlMs: opts.authorizationWebhookCacheUnauthorizedTtlMs,
    failurePolicy: 'Deny',
    withSelectors: false,
    log,
    clock,
  });
}
