// Forward auth (gateway/forwardauth/) and the route table (gateway/routes/): the endpoint nginx, Traefik and Envoy call, who may call it, and what each path means.
import { ConfigError } from '../../../lib/config/error.js';
import { csv, flagsOf, optionalPath, type OptionGroup } from './flag.js';

export interface ForwardAuthOptions {
  /** The forward-auth endpoint's path (Envoy: the path prefix before the original path). */
  readonly forwardAuthPath: string;
  /** CNs of proxy client certificates (chained to --client-ca-file) that may call it. */
  readonly forwardAuthProxyNames: readonly string[];
  /** Addresses (IPs, CIDRs) that may call it without a certificate. */
  readonly forwardAuthTrustedAddresses: readonly string[];
  /** The route table file; absent = one route for every path (non-resource attributes). */
  readonly routesFile: string | undefined;
}

const flag = flagsOf<ForwardAuthOptions>();

export const forwardAuth: OptionGroup<ForwardAuthOptions> = {
  title: 'Forward auth and routes',
  defaults: {
    forwardAuthPath: '/gatehouse/forward-auth',
    forwardAuthProxyNames: [],
    forwardAuthTrustedAddresses: [],
    routesFile: undefined,
  },
  flags: [
    flag({
      name: 'forward-auth-path',
      key: 'forwardAuthPath',
      arg: 'path',
      help: 'The forward-auth endpoint (nginx auth_request, Traefik ForwardAuth; Envoy ext_authz appends the original path)',
      parse: (raw) => {
        if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(raw) || raw.split('/').some((s) => s === '.' || s === '..')) {
          throw new ConfigError('must be a path of one or more plain segments, such as /gatehouse/forward-auth');
        }
        return raw;
      },
    }),
    flag({
      name: 'forward-auth-proxy-names',
      key: 'forwardAuthProxyNames',
      arg: 'cn,…',
      list: true,
      help: 'Proxies whose client certificate (verified against --client-ca-file) has one of these CNs may call the forward-auth endpoint',
      parse: csv,
    }),
    flag({
      name: 'forward-auth-trusted-addresses',
      key: 'forwardAuthTrustedAddresses',
      arg: 'ip|cidr,…',
      list: true,
      help: 'Proxies connecting from these addresses may call the forward-auth endpoint without a certificate',
      parse: csv,
    }),
    flag({
      name: 'routes',
      key: 'routesFile',
      arg: 'file',
      help: 'Route table (YAML/JSON `routes:`): per path, its upstream (sidecar mode), action and authorization attributes; first match wins, no match is 404',
      parse: optionalPath,
    }),
  ],
};
