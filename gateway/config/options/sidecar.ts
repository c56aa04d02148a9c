// Sidecar mode (gateway/sidecar/): one upstream behind authentication and authorization, as kube-rbac-proxy.
import { isIP } from 'node:net';
import { ConfigError } from '../../../lib/config/error.js';
import { bool, csv, flagsOf, headerName, headerSeparator, int, optionalPath, requires, type OptionGroup } from './flag.js';

export interface SidecarOptions {
  /** Sidecar mode (gateway/sidecar/): the one HTTP(S) service every authorized request is proxied to. */
  readonly upstream: string | undefined;
  readonly upstreamCaFile: string | undefined;
  /** The sidecar's client certificate to an https upstream (mTLS). */
  readonly upstreamClientCertFile: string | undefined;
  readonly upstreamClientKeyFile: string | undefined;
  /** kube-rbac-proxy style file: `resourceAttributes: {namespace, apiGroup, apiVersion, resource, subresource, name}`. */
  readonly resourceAttributesFile: string | undefined;
  readonly allowPaths: readonly string[];
  readonly ignorePaths: readonly string[];
  /** kube-rbac-proxy's identity headers to the upstream: the user, and the groups joined by a separator. */
  readonly authHeaderFieldsEnabled: boolean;
  readonly authHeaderUserFieldName: string;
  readonly authHeaderGroupsFieldName: string;
  readonly authHeaderGroupsFieldSeparator: string;
  /** kube-rbac-proxy's --insecure-listen-address: plain HTTP on a loopback host:port, beside HTTPS. */
  readonly insecureListen: { readonly host: string; readonly port: number } | undefined;
  /** kube-rbac-proxy's --upstream-force-h2c: HTTP/2 without TLS to a loopback upstream. */
  readonly upstreamForceH2c: boolean;
  /** kube-rbac-proxy's --proxy-endpoints-port: the sidecar's own /healthz on this port (0 = none). */
  readonly proxyEndpointsPort: number;
  /** kube-rbac-proxy's --kubeconfig: the cluster TokenReview and SubjectAccessReview go to when no webhook file names one. */
  readonly kubeconfigFile: string | undefined;
}

const flag = flagsOf<SidecarOptions>();

/** Whether an upstream URL names this host (a loopback IP, localhost, or a unix socket). */
export function isLoopbackUrl(url: string): boolean {
  if (url.startsWith('unix:')) return true;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** An upstream URL (--upstream, a route's upstream): http or https, no query or fragment, no trailing slash. */
export function upstreamUrl(raw: string): string {
  if (raw.startsWith('unix:')) {
    if (!/^unix:\/\/\/[^?#]+$/.test(raw)) throw new ConfigError('a unix socket upstream must be unix:///absolute/path');
    return raw;
  }
  if (!URL.canParse(raw) || !['http:', 'https:'].includes(new URL(raw).protocol)) throw new ConfigError('must be an http://, https:// or unix:/// URL');
  if (/[?#]/.test(raw)) throw new ConfigError('must not contain a query or fragment');
  return raw.replace(/\/+$/, '');
}

export const sidecar: OptionGroup<SidecarOptions> = {
  title: 'Sidecar mode',
  defaults: {
    upstream: undefined,
    upstreamCaFile: undefined,
    upstreamClientCertFile: undefined,
    upstreamClientKeyFile: undefined,
    resourceAttributesFile: undefined,
    allowPaths: [],
    ignorePaths: [],
    authHeaderFieldsEnabled: false,
    authHeaderUserFieldName: 'x-remote-user',
    authHeaderGroupsFieldName: 'x-remote-groups',
    authHeaderGroupsFieldSeparator: '|',
    kubeconfigFile: undefined,
    proxyEndpointsPort: 0,
    upstreamForceH2c: false,
    insecureListen: undefined,
  },
  flags: [
    flag({
      name: 'upstream',
      key: 'upstream',
      arg: 'url',
      help: 'Sidecar mode: authenticate and authorize every request, then proxy it to this http(s) URL with X-Remote-* identity headers',
      parse: upstreamUrl,
    }),
    flag({
      name: 'upstream-ca-file',
      key: 'upstreamCaFile',
      arg: 'file',
      help: 'CA bundle of an https --upstream (default: system roots)',
      parse: optionalPath,
    }),
    flag({
      name: 'upstream-client-cert-file',
      key: 'upstreamClientCertFile',
      arg: 'file',
      help: 'Client certificate the sidecar presents to an https --upstream (needs --upstream-client-key-file)',
      parse: optionalPath,
    }),
    flag({
      name: 'upstream-client-key-file',
      key: 'upstreamClientKeyFile',
      arg: 'file',
      help: 'Private key of --upstream-client-cert-file',
      parse: optionalPath,
    }),
    flag({
      name: 'resource-attributes',
      key: 'resourceAttributesFile',
      arg: 'file',
      help: 'Sidecar mode: YAML/JSON with resourceAttributes {namespace, apiGroup, apiVersion, resource, subresource, name} authorized instead of the path',
      parse: optionalPath,
    }),
    flag({
      name: 'allow-paths',
      key: 'allowPaths',
      arg: 'pattern,…',
      list: true,
      help: 'Sidecar mode: only paths matching one of these patterns (* = one path segment) are proxied; others get 404',
      parse: csv,
    }),
    flag({
      name: 'ignore-paths',
      key: 'ignorePaths',
      arg: 'pattern,…',
      list: true,
      help: 'Sidecar mode: paths matching these patterns are proxied without authentication or authorization',
      parse: csv,
    }),
    flag({
      name: 'auth-header-fields-enabled',
      key: 'authHeaderFieldsEnabled',
      arg: 'bool',
      boolean: true,
      help: 'Sidecar mode: send the user and groups to the upstream in --auth-header-user-field-name and --auth-header-groups-field-name (kube-rbac-proxy)',
      parse: bool,
    }),
    flag({
      name: 'auth-header-user-field-name',
      key: 'authHeaderUserFieldName',
      arg: 'header',
      help: "Sidecar mode: the header telling the upstream the user name; a client's own is always removed",
      parse: headerName,
    }),
    flag({
      name: 'auth-header-groups-field-name',
      key: 'authHeaderGroupsFieldName',
      arg: 'header',
      help: "Sidecar mode: the header telling the upstream the user's groups; a client's own is always removed",
      parse: headerName,
    }),
    flag({
      name: 'auth-header-groups-field-separator',
      key: 'authHeaderGroupsFieldSeparator',
      arg: 'string',
      help: 'Sidecar mode: what joins the group names in the groups header',
      parse: headerSeparator,
    }),
    flag({
      name: 'insecure-listen-address',
      key: 'insecureListen',
      arg: 'host:port',
      help: 'Sidecar mode: also serve plain HTTP here, for clients in the same pod (loopback addresses only)',
      parse: (raw) => {
        const m = /^(?:\[([^\]]*)\]|([^:]*)):([0-9]{1,5})$/.exec(raw);
        if (!m) throw new ConfigError('must be host:port');
        const host = m[1] ?? m[2] ?? '';
        const port = Number(m[3]);
        if (port < 1 || port > 65535) throw new ConfigError('the port must be between 1 and 65535');
        if (!(host === 'localhost' || host === '::1' || /^127\.[0-9]+\.[0-9]+\.[0-9]+$/.test(host)))
          throw new ConfigError('plain HTTP is served only on a loopback address');
        return Object.freeze({ host, port });
      },
    }),
    flag({
      name: 'upstream-force-h2c',
      key: 'upstreamForceH2c',
      arg: 'bool',
      boolean: true,
      help: 'Sidecar mode: speak h2c (HTTP/2 without TLS) to a loopback http:// --upstream, such as an insecure gRPC server',
      parse: bool,
    }),
    flag({
      name: 'proxy-endpoints-port',
      key: 'proxyEndpointsPort',
      arg: 'port',
      help: "Sidecar mode: serve the sidecar's own /healthz on this port (HTTPS, --bind-address); then /healthz on --secure-port goes to the upstream",
      parse: (raw) => int(raw, 0, 65535, 'must be an integer between 0 and 65535'),
    }),
    flag({
      name: 'kubeconfig',
      key: 'kubeconfigFile',
      arg: 'file',
      help: 'Sidecar mode: the cluster to ask TokenReview and SubjectAccessReview of (an ordinary kubeconfig); default: in-cluster',
      parse: optionalPath,
    }),
  ],
  checks(o, given) {
    const out: string[] = [];
    if (o.upstream === undefined) {
      const orphan = [
        o.upstreamCaFile !== undefined && '--upstream-ca-file',
        o.upstreamClientCertFile !== undefined && '--upstream-client-cert-file',
        o.resourceAttributesFile !== undefined && '--resource-attributes',
        o.allowPaths.length > 0 && '--allow-paths',
        o.ignorePaths.length > 0 && '--ignore-paths',
        o.authHeaderFieldsEnabled && '--auth-header-fields-enabled',
        o.kubeconfigFile !== undefined && '--kubeconfig',
        o.proxyEndpointsPort !== 0 && '--proxy-endpoints-port',
        o.upstreamForceH2c && '--upstream-force-h2c',
        o.insecureListen !== undefined && '--insecure-listen-address',
      ].filter((f): f is string => f !== false);
      if (orphan.length > 0) out.push(requires(orphan, '--upstream'));
      return out;
    }
    if (o.upstreamCaFile !== undefined && !o.upstream.startsWith('https:')) out.push('--upstream-ca-file requires an https:// --upstream');
    if ((o.upstreamClientCertFile === undefined) !== (o.upstreamClientKeyFile === undefined)) {
      out.push('--upstream-client-cert-file and --upstream-client-key-file must be given together');
    } else if (o.upstreamClientCertFile !== undefined && !o.upstream.startsWith('https:')) {
      out.push('--upstream-client-cert-file requires an https:// --upstream');
    }
    if (o.upstreamForceH2c && (!o.upstream.startsWith('http:') || !isLoopbackUrl(o.upstream))) {
      out.push(`--upstream-force-h2c needs a loopback http:// --upstream (h2c carries identity in clear): "${o.upstream}" is not one`);
    }
    // Forward auth asks about the route table's attributes; kube-rbac-proxy's file (rewrites from the proxied request) is the proxy's only.
    if (o.resourceAttributesFile !== undefined && (o.forwardAuthProxyNames.length > 0 || o.forwardAuthTrustedAddresses.length > 0)) {
      out.push(
        '--resource-attributes applies to the proxy only: forward auth (--forward-auth-proxy-names, --forward-auth-trusted-addresses) takes its attributes from --routes',
      );
    }
    if (o.upstreamForceH2c && o.routesFile !== undefined) out.push('--upstream-force-h2c and --routes are mutually exclusive (one h2c upstream)');
    // kube-rbac-proxy's rule: its identity fields travel in clear only to the same host; elsewhere the upstream must be reached with mTLS.
    if (o.authHeaderFieldsEnabled && !isLoopbackUrl(o.upstream) && o.upstreamClientCertFile === undefined) {
      out.push(
        `--auth-header-fields-enabled sends identity headers only to a loopback --upstream or over mTLS (--upstream-client-cert-file with https): "${o.upstream}" is neither`,
      );
    }
    // Sidecar mode authorizes through the cluster's SubjectAccessReview (webhook file or in-cluster), nothing else.
    if (given.has('authorization-mode') && (o.authorizationModes.length !== 1 || o.authorizationModes[0] !== 'Webhook')) {
      out.push('--upstream authorizes through the cluster (SubjectAccessReview): --authorization-mode must be Webhook or unset');
    }
    // The sidecar has no FlowSchemas of its own (gateway/sidecar/README.md): asking for them is a mistake to report, not to ignore.
    if (given.has('enable-priority-and-fairness') && o.enablePriorityAndFairness) {
      out.push('--upstream keeps the plain in-flight limits (no FlowSchemas of its own): --enable-priority-and-fairness must be false or unset');
    }
    const clash = ['authorization-config', 'authorization-policy-file', 'core-backend-url'].filter((n) => given.has(n));
    if (clash.length > 0) out.push(`--upstream and ${clash.map((n) => `--${n}`).join(', ')} are mutually exclusive`);
    if (o.allowPaths.length > 0 && o.ignorePaths.length > 0) out.push('--allow-paths and --ignore-paths are mutually exclusive');
    // The route table says per route what these flags say for the one upstream: both would leave one of them unread.
    const perRoute = ['allow-paths', 'ignore-paths', 'resource-attributes'].filter((n) => given.has(n));
    if (o.routesFile !== undefined && perRoute.length > 0)
      out.push(`--routes and ${perRoute.map((n) => `--${n}`).join(', ')} are mutually exclusive (each route says it)`);
    if (o.authHeaderUserFieldName === o.authHeaderGroupsFieldName) {
      out.push(`invalid value "${o.authHeaderGroupsFieldName}" for --auth-header-groups-field-name: must differ from --auth-header-user-field-name`);
    }
    return out;
  },
};
