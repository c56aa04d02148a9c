// The small part of oidc-provider (no bundled types) that the OIDC tests use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export interface Configuration {
    jwks?: { keys: readonly object[] };
    clients?: ReadonlyArray<{ client_id: string; client_secret?: string; redirect_uris?: readonly string[] }>;
    cookies?: { keys?: readonly string[] };
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => unknown;
  }
}
