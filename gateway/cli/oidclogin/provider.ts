// The provider as openid-client sees it: discovery from the issuer, and every
// request made through undici with the CAs of --certificate-authority(-data)
// (or none checked with --insecure-skip-tls-verify) and a deadline, so a
// provider that is down or slow ends in a message, not a hang.
import { readFileSync } from 'node:fs';
import * as client from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import type { LoginOptions } from './flags.js';

export class LoginError extends Error {}

export interface Provider {
  readonly config: client.Configuration;
  readonly issuer: string;
  /** The provider's fetch (its CAs and timeout), for the JWKS. */
  readonly fetch: client.CustomFetch;
  close(): Promise<void>;
}

function caBundle(o: LoginOptions): string[] | undefined {
  const cas: string[] = [];
  for (const f of o.certificateAuthorities) {
    try {
      cas.push(readFileSync(f, 'utf8'));
    } catch (err) {
      throw new LoginError(`--certificate-authority ${f} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  }
  for (const d of o.certificateAuthorityData) {
    const pem = Buffer.from(d, 'base64').toString('utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new LoginError('--certificate-authority-data is not a base64 PEM certificate');
    cas.push(pem);
  }
  return cas.length > 0 ? cas : undefined;
}

/** Why a request to the provider failed, in words (the causes openid-client, oauth4webapi and undici nest). */
export function describeError(err: unknown, issuer: string, timeoutSec: number): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e && depth < 6; depth++) {
    if (e instanceof Error) {
      const x = e as Error & { code?: string; error?: string; error_description?: string; cause?: unknown };
      if (x.name === 'TimeoutError' || x.code === 'UND_ERR_CONNECT_TIMEOUT' || x.code === 'UND_ERR_HEADERS_TIMEOUT') {
        return `the OIDC provider ${issuer} did not answer within ${timeoutSec}s`;
      }
      if (x.code === 'ECONNREFUSED') return `the OIDC provider ${issuer} refused the connection (is it down?)`;
      if (typeof x.error === 'string') {
        parts.push(`the provider answered ${x.error}${x.error_description ? `: ${x.error_description}` : ''}`);
        break;
      }
      if (x.message && !parts.includes(x.message)) parts.push(x.message);
      e = x.cause;
    } else break;
  }
  return parts.join(': ') || String(err);
}

/** Discovery from the issuer with the options' TLS and timeout. */
export async function discover(o: LoginOptions, deadline: number): Promise<Provider> {
  const ca = caBundle(o);
  // The connect phase (TCP and TLS) is bounded by the deadline too: an aborted fetch leaves a pending connect behind,
  // and it would hold the process open until undici's own 10 s.
  const agent = new Agent({
    connect: { ...(ca ? { ca } : {}), rejectUnauthorized: !o.insecureSkipTlsVerify, timeout: Math.max(1, deadline - Date.now()) },
  });
  const fetch: client.CustomFetch = (url, init) => {
    const left = Math.max(1, deadline - Date.now());
    const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(left)]) : AbortSignal.timeout(left);
    return undiciFetch(url, { ...init, signal, dispatcher: agent } as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>;
  };
  const metadata: Partial<client.ClientMetadata> = o.clientSecret ? { client_secret: o.clientSecret } : {};
  const auth = o.clientSecret ? client.ClientSecretBasic(o.clientSecret) : client.None();
  const timeout = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
  try {
    const config = await client.discovery(new URL(o.issuerUrl), o.clientId, metadata, auth, {
      [client.customFetch]: fetch,
      timeout,
      ...(new URL(o.issuerUrl).protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
    });
    // destroy, not close: a close waits on a connection a silent provider never finishes, past the deadline.
    return { config, issuer: config.serverMetadata().issuer, fetch, close: () => agent.destroy() };
  } catch (err) {
    await agent.destroy();
    throw new LoginError(`discovery at ${o.issuerUrl} failed: ${describeError(err, o.issuerUrl, o.authenticationTimeoutSec)}`);
  }
}
