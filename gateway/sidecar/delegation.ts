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

export interface DelegationContext {
  readonly env: NodeJS.ProcessEnv;
  readonly log: (msg: string) => void;
  readonly clock: () => number;
  /** Closers of the clients made, run at shutdown. */
  readonly closers: Array<() => void>;
}

/** Bearer tokens through the cluster's TokenReview (cached for --authentication-token-webhook-cache-ttl). */
export async function delegatedTokens(opts: ServeOptions, d: DelegationContext): Promise<TokenAuthenticator> {
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
  const config = await inClusterConfig('/apis/authentication.k8s.io/v1/tokenreviews', d.env, '--authentication-token-webhook-config-file');
  const client = new KubeClient(config, { timeoutMs: 10_000, log, clock, purpose: 'token webhook' });
  d.closers.push(() => client.close());
  log(`sidecar: TokenReview through the in-cluster configuration (${client.config.cluster.server})`);
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
    client = new KubeClient(await inClusterConfig('/apis/authorization.k8s.io/v1/subjectaccessreviews', d.env, '--authorization-webhook-config-file'), {
      timeoutMs: 10_000,
      log,
      clock,
      purpose: 'authorization webhook',
    });
    version = 'v1';
    log(`sidecar: SubjectAccessReview through the in-cluster configuration (${client.config.cluster.server})`);
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
