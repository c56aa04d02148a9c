// OIDC discovery through openid-client: `<issuer>/.well-known/openid-configuration`
// or the configured discoveryURL used as is (any path, any host); the
// discovered `issuer` must equal the configured issuer URL exactly — never
// the discoveryURL — and `jwks_uri` must be https.
import type * as oidc from 'openid-client';
import type { IssuerSpec } from '../../config/authnconfig-types.js';
import type { Fetcher } from './fetch.js';

export interface Discovered {
  readonly issuer: string;
  readonly jwksUri: string;
}

export async function discover(issuer: IssuerSpec, fetcher: Fetcher, timeoutMs: number): Promise<Discovered> {
  // openid-client compares the document's issuer with the server it is given,
  // so it is given issuer.url (as kube compares with issuer.url), and a
  // discoveryURL only changes where the one request goes: that address as
  // written, whatever its path (an in-cluster service, no well-known suffix).
  const server = new URL(issuer.url);
  const where = issuer.discoveryURL ?? `${issuer.url.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const fetchIt: oidc.CustomFetch = (url, init) => fetcher(issuer.discoveryURL ?? url, { headers: init.headers, signal: init.signal ?? null });
  let config: oidc.Configuration;
  try {
    // Imported on first discovery: openid-client's module loading is no part of a start without OIDC issuers.
    const { discovery, customFetch } = await import('openid-client');
    config = await discovery(server, issuer.audiences[0] ?? 'gatehouse', undefined, undefined, {
      [customFetch]: fetchIt,
      timeout: Math.ceil(timeoutMs / 1000),
    });
  } catch (err) {
    throw new Error(`discovery of issuer ${JSON.stringify(issuer.url)} at ${JSON.stringify(where)} failed: ${describe(err)}`);
  }
  const meta = config.serverMetadata();
  if (meta.issuer !== issuer.url) {
    throw new Error(`discovered issuer ${JSON.stringify(meta.issuer)} does not match the configured issuer ${JSON.stringify(issuer.url)}`);
  }
  if (typeof meta.jwks_uri !== 'string' || !meta.jwks_uri.startsWith('https://')) {
    throw new Error(`discovery document of ${JSON.stringify(issuer.url)} has no https jwks_uri`);
  }
  return { issuer: meta.issuer, jwksUri: meta.jwks_uri };
}

export function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
