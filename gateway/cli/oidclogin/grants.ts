// The grants besides the browser's authorization code: a pasted code
// (authcode-keyboard), device code (RFC 8628), password, client credentials,
// and refresh. Each returns the token response and the nonce it sent, if any,
// for the verification that follows.
import * as client from 'openid-client';
import type { LoginOptions } from './flags.js';
import { ask } from './prompt.js';
import { openUrl } from './browser.js';
import { authRequest } from './authrequest.js';
import { LoginError, describeError, type Provider } from './provider.js';

export interface TokenResponse {
  tokens: client.TokenEndpointResponse;
  nonce?: string;
}

type Warn = (m: string) => void;

function failed(what: string, p: Provider, o: LoginOptions) {
  return (err: unknown): never => {
    if (err instanceof LoginError) throw err;
    throw new LoginError(`${what} failed: ${describeError(err, p.issuer, o.authenticationTimeoutSec)}`);
  };
}

/** kubelogin's authcode-keyboard: the URL printed, the code pasted back; the redirect goes to --oidc-redirect-url (default the out-of-band URN). */
export async function keyboardLogin(p: Provider, o: LoginOptions, scopes: string[], warn: Warn): Promise<TokenResponse> {
  const redirectUri = o.redirectUrl ?? 'urn:ietf:wg:oauth:2.0:oob';
  const request = await authRequest(p, o, scopes, redirectUri);
  warn(`Please visit the following URL in your browser: ${request.url}`);
  const code = await ask('Enter code: ', { what: 'the authorization code' });
  if (code === '') throw new LoginError('no authorization code was entered');
  const tokens = await client.genericGrantRequest(p.config, 'authorization_code', request.exchange(code)).catch(failed('the code exchange', p, o));
  return { tokens, nonce: request.nonce };
}

export async function deviceCodeLogin(p: Provider, o: LoginOptions, scopes: string[], deadline: number, warn: Warn): Promise<TokenResponse> {
  if (!p.config.serverMetadata().device_authorization_endpoint) throw new LoginError(`the provider ${p.issuer} announces no device_authorization_endpoint`);
  const d = await client.initiateDeviceAuthorization(p.config, { scope: scopes.join(' ') }).catch(failed('the device authorization request', p, o));
  warn(`Please enter the code ${d.user_code} at ${d.verification_uri}`);
  if (!o.skipOpenBrowser) openUrl(o, d.verification_uri_complete ?? d.verification_uri, warn);
  const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
  const tokens = await client.pollDeviceAuthorizationGrant(p.config, d, undefined, { signal }).catch((err: unknown) => {
    if (signal.aborted) throw new LoginError(`the device code was not entered within --authentication-timeout-sec=${o.authenticationTimeoutSec}`);
    return failed('the device code grant', p, o)(err);
  });
  return { tokens };
}

export async function passwordLogin(p: Provider, o: LoginOptions, scopes: string[]): Promise<TokenResponse> {
  const username = o.username ?? (await ask('Username: ', { what: '--username' }));
  const password = o.password ?? (await ask('Password: ', { secret: true, what: '--password' }));
  const tokens = await client
    .genericGrantRequest(p.config, 'password', { username, password, scope: scopes.join(' ') })
    .catch(failed('the password grant', p, o));
  return { tokens };
}

export async function clientCredentialsLogin(p: Provider, o: LoginOptions, scopes: string[]): Promise<TokenResponse> {
  const tokens = await client.clientCredentialsGrant(p.config, { scope: scopes.join(' ') }).catch(failed('the client credentials grant', p, o));
  return { tokens };
}

export async function refresh(p: Provider, o: LoginOptions, refreshToken: string): Promise<TokenResponse> {
  const tokens = await client.refreshTokenGrant(p.config, refreshToken).catch(failed('the refresh', p, o));
  return { tokens };
}
