// The small part of oidc-provider (no bundled types) that the OIDC tests use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris?: readonly string[];
    application_type?: 'web' | 'native';
    grant_types?: readonly string[];
    response_types?: readonly string[];
    token_endpoint_auth_method?: string;
  }
  export interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }
  export interface Configuration {
    jwks?: { keys: readonly object[] };
    clients?: readonly ClientMetadata[];
    cookies?: { keys?: readonly string[] };
    claims?: Record<string, readonly string[]>;
    conformIdTokenClaims?: boolean;
    features?: Record<string, { enabled: boolean } & Record<string, unknown>>;
    ttl?: Record<string, number | ((...args: unknown[]) => number)>;
    issueRefreshToken?: (ctx: unknown, client: { grantTypeAllowed(t: string): boolean }, code: unknown) => boolean | Promise<boolean>;
    findAccount?: (ctx: unknown, sub: string) => Account | undefined | Promise<Account | undefined>;
    rotateRefreshToken?: boolean;
  }
  /** What a registered grant's handler sees of the request. */
  export interface GrantContext {
    oidc: { params: Record<string, string | undefined>; client: { clientId: string } };
    body: unknown;
    status: number;
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => unknown;
    registerGrantType(name: string, handler: (ctx: GrantContext) => Promise<void>, params?: readonly string[]): void;
  }
}
