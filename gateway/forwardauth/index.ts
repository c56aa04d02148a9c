// Builds the forward-auth endpoint of a serving process (the gateway or the
// sidecar) from its flags and its own authentication and authorization.
import { ConfigError } from '../../lib/config/error.js';
import type { ServeOptions } from '../config/flags.js';
import type { CurrentCaBundle } from '../authn/certchain.js';
import { BearerAuthenticator, type TokenAuthenticator } from '../authn/token.js';
import { UnionAuthenticator } from '../authn/union.js';
import type { Authorizer } from '../authz/types.js';
import type { RouteTable } from '../routes/table.js';
import { ForwardedCertAuthenticator } from './clientcert.js';
import type { ForwardAuthOptions } from './endpoint.js';
import { ProxyTrust } from './trust.js';

export { withForwardAuth, type ForwardAuthOptions } from './endpoint.js';

export interface ForwardAuthInputs {
  /** --client-ca-file in force: proxy certificates and forwarded client certificates chain to it. */
  readonly clientCa: CurrentCaBundle;
  /** The server's token methods, and the audiences tokens must be valid for. */
  readonly tokens: TokenAuthenticator;
  readonly apiAudiences: readonly string[];
  readonly authorizer: Authorizer;
  readonly routes: RouteTable;
  readonly log: (msg: string) => void;
  readonly clock: () => number;
}

export function buildForwardAuth(opts: ServeOptions, i: ForwardAuthInputs): ForwardAuthOptions {
  let trust: ProxyTrust;
  try {
    trust = new ProxyTrust({ cas: i.clientCa, names: opts.forwardAuthProxyNames, addresses: opts.forwardAuthTrustedAddresses, clock: i.clock });
  } catch (err) {
    throw err instanceof ConfigError ? err.forFlag('--forward-auth-trusted-addresses', opts.forwardAuthTrustedAddresses.join(',')) : err;
  }
  if (opts.forwardAuthProxyNames.length > 0 && i.clientCa.current.anchors.length === 0) {
    throw new ConfigError('proxy certificates are verified against --client-ca-file, which is not set', { flag: '--forward-auth-proxy-names' });
  }
  // The proxy's own certificate is on the connection; the caller's credentials are the forwarded ones only.
  const authenticator = new UnionAuthenticator([new ForwardedCertAuthenticator(i.clientCa, i.clock), new BearerAuthenticator(i.tokens, i.apiAudiences)], {
    anonymous: false,
    log: i.log,
  });
  if (trust.configured) i.log(`forward auth: serving ${opts.forwardAuthPath} to trusted proxies`);
  return { path: opts.forwardAuthPath, trust, authenticator, authorizer: i.authorizer, routes: i.routes, log: i.log };
}
