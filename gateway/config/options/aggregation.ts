// Reaching aggregated API backends: the front-proxy client certificate, and a remote core backend.
import { ConfigError } from '../../../lib/config/error.js';
import { flagsOf, optionalPath, type OptionGroup } from './flag.js';

export interface AggregationOptions {
  /** Front-proxy client certificate presented to aggregated backends (default: the dev PKI's front-proxy-client). */
  readonly proxyClientCertFile: string | undefined;
  readonly proxyClientKeyFile: string | undefined;
  /** Built-in groups served by a remote core backend (gateway/aggregation/remotecore.ts) instead of in-process. */
  readonly coreBackendUrl: string | undefined;
  readonly coreBackendCaFile: string | undefined;
}

const flag = flagsOf<AggregationOptions>();

export const aggregation: OptionGroup<AggregationOptions> = {
  title: 'Aggregation',
  defaults: {
    proxyClientCertFile: undefined,
    proxyClientKeyFile: undefined,
    coreBackendUrl: undefined,
    coreBackendCaFile: undefined,
  },
  flags: [
    flag({
      name: 'proxy-client-cert-file',
      key: 'proxyClientCertFile',
      arg: 'file',
      help: 'Client certificate (PEM) presented to aggregated API backends; default: the dev PKI front-proxy-client',
      parse: optionalPath,
    }),
    flag({ name: 'proxy-client-key-file', key: 'proxyClientKeyFile', arg: 'file', help: 'Private key of --proxy-client-cert-file', parse: optionalPath }),
    flag({
      name: 'core-backend-url',
      key: 'coreBackendUrl',
      arg: 'url',
      help: 'Serve the built-in groups from a remote `gatehouse core-backend` (https URL) instead of in-process',
      parse: (raw) => {
        if (!URL.canParse(raw) || new URL(raw).protocol !== 'https:') throw new ConfigError('must be an https:// URL');
        const u = new URL(raw);
        if (u.search || u.hash || (u.pathname !== '/' && u.pathname !== '')) throw new ConfigError('must be https://host:port with no path, query or fragment');
        return `${u.protocol}//${u.host}`;
      },
    }),
    flag({
      name: 'core-backend-ca-file',
      key: 'coreBackendCaFile',
      arg: 'file',
      help: "CA bundle of --core-backend-url's serving certificate",
      parse: optionalPath,
    }),
  ],
  checks(o) {
    const out: string[] = [];
    if ((o.proxyClientCertFile === undefined) !== (o.proxyClientKeyFile === undefined)) {
      out.push('--proxy-client-cert-file and --proxy-client-key-file must be given together');
    }
    if (o.coreBackendCaFile !== undefined && o.coreBackendUrl === undefined) out.push('--core-backend-ca-file requires --core-backend-url');
    if (o.coreBackendUrl !== undefined && o.coreBackendCaFile === undefined) out.push('--core-backend-url requires --core-backend-ca-file');
    return out;
  },
};
