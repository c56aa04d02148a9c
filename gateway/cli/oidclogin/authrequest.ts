// One authorization request for the code flows (browser and keyboard): a
// fresh state and nonce, PKCE S256 when --oidc-pkce-method asks or (auto) the
// provider announces it, --oidc-auth-request-extra-params under the
// protocol's own, and the code exchange's parameters that go with it.
import * as client from 'openid-client';
import type { LoginOptions } from './flags.js';
import type { Provider } from './provider.js';

export interface AuthRequest {
  readonly url: string;
  readonly state: string;
  readonly nonce: string;
  /** The token request's parameters for the code the provider sends back. */
  exchange(code: string): Record<string, string>;
}

export async function authRequest(p: Provider, o: LoginOptions, scopes: readonly string[], redirectUri: string): Promise<AuthRequest> {
  const state = client.randomState();
  const nonce = client.randomNonce();
  const supported = p.config.serverMetadata().code_challenge_methods_supported ?? [];
  const pkce = o.pkceMethod === 'S256' || (o.pkceMethod === 'auto' && supported.includes('S256'));
  const verifier = pkce ? client.randomPKCECodeVerifier() : undefined;
  const params: Record<string, string> = {
    ...o.authRequestExtraParams,
    redirect_uri: redirectUri,
    scope: scopes.join(' '),
    state,
    nonce,
    response_type: 'code',
  };
  if (verifier) Object.assign(params, { code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
  return {
    url: client.buildAuthorizationUrl(p.config, params).href,
    state,
    nonce,
    exchange: (code) => ({ code, redirect_uri: redirectUri, ...(verifier ? { code_verifier: verifier } : {}) }),
  };
}
