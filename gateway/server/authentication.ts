// The gateway's authentication, built once per start: the authenticating
// proxy (--requestheader-*), client certificates, and every bearer-token
// method in kube-apiserver's order — static file, bootstrap, service
// accounts, OIDC, then the webhook last, so a token another method knows is
// never sent out. TokenReview runs the same token methods.
import type { ObjectSource } from '../../lib/api/objectsource.js';
import type { ServeOptions } from '../config/flags.js';
import { X509Authenticator } from '../authn/x509.js';
import { UnionAuthenticator } from '../authn/union.js';
import { BearerAuthenticator, TokenUnion, type TokenAuthenticator } from '../authn/token.js';
import { buildWebhookAuthenticator } from '../authn/webhook.js';
import { startOidc } from '../authn/jwt/start.js';
import { RequestHeaderAuthenticator, type RequestHeaderConfig } from '../authn/requestheader.js';
import type { Authenticator } from '../authn/types.js';
import { buildTokenMethods, type LoadedTokenMethods } from './tokenmethods.js';
import type { GatewayTls } from './serving.js';
import type { AppHooks } from './app.js';

export interface GatewayAuthentication {
  readonly authenticator: UnionAuthenticator;
  /** Every bearer-token method, for TokenReview. */
  readonly tokens: TokenUnion;
  /** Audiences tokens must be valid for when presented to this server (--api-audiences). */
  readonly apiAudiences: readonly string[];
  close(): void;
}

export interface AuthenticationInputs {
  readonly tls: GatewayTls;
  readonly requestheader: RequestHeaderConfig | undefined;
  readonly tokenMethods: LoadedTokenMethods;
  readonly objects: ObjectSource;
  readonly clock: () => number;
}

/** --requestheader-* as read by the authenticating-proxy method; undefined when no proxy CA is configured. */
export function requestheaderConfig(opts: ServeOptions, tls: GatewayTls): RequestHeaderConfig | undefined {
  if (!tls.requestheaderCa) return undefined;
  return {
    usernameHeaders: opts.requestheaderUsernameHeaders,
    uidHeaders: opts.requestheaderUidHeaders,
    groupHeaders: opts.requestheaderGroupHeaders,
    extraHeaderPrefixes: opts.requestheaderExtraHeadersPrefix,
    allowedNames: opts.requestheaderAllowedNames,
  };
}

async function tokenAuthenticators(opts: ServeOptions, hooks: AppHooks, i: AuthenticationInputs, closers: Array<() => void>): Promise<TokenAuthenticator[]> {
  const apiAudiences = i.tokenMethods.serviceAccounts.apiAudiences;
  const out: TokenAuthenticator[] = buildTokenMethods({ opts, loaded: i.tokenMethods, objects: i.objects, clock: i.clock });
  // OIDC: --oidc-* flags or --authentication-config (reloaded on change).
  const oidc = await startOidc(opts, { log: hooks.log, clock: i.clock, apiAudiences, serviceAccountIssuers: opts.serviceAccountIssuers });
  if (oidc) {
    out.push(oidc.authenticator);
    closers.push(oidc.close);
  }
  if (opts.authenticationTokenWebhookConfigFile) {
    const webhook = await buildWebhookAuthenticator({
      configFile: opts.authenticationTokenWebhookConfigFile,
      cacheTtlMs: opts.authenticationTokenWebhookCacheTtlMs,
      version: opts.authenticationTokenWebhookVersion,
      apiAudiences,
      log: hooks.log,
      clock: i.clock,
      ...(hooks.tokenWebhookTimeoutMs !== undefined ? { timeoutMs: hooks.tokenWebhookTimeoutMs } : {}),
    });
    out.push(webhook.authenticator);
    closers.push(webhook.close);
  }
  return out;
}

export async function buildAuthentication(opts: ServeOptions, hooks: AppHooks, i: AuthenticationInputs): Promise<GatewayAuthentication> {
  const closers: Array<() => void> = [];
  const apiAudiences = i.tokenMethods.serviceAccounts.apiAudiences;
  const tokens = new TokenUnion(await tokenAuthenticators(opts, hooks, i, closers));
  const authenticators: Authenticator[] = [];
  // The CA bundles as serveHttps keeps them current: a reload is seen by the next request.
  if (i.requestheader && i.tls.requestheaderCa) authenticators.push(new RequestHeaderAuthenticator(i.tls.requestheaderCa, i.requestheader, i.clock));
  if (i.tls.clientCa.paths.length > 0) authenticators.push(new X509Authenticator({ cas: i.tls.clientCa, clock: i.clock }));
  authenticators.push(new BearerAuthenticator(tokens, apiAudiences));
  return {
    authenticator: new UnionAuthenticator(authenticators, { anonymous: opts.anonymousAuth, log: hooks.log }),
    tokens,
    apiAudiences,
    close: () => {
      for (const c of closers) c();
    },
  };
}
