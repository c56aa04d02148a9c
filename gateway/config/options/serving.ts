// The HTTPS server: address, certificates, timeouts, body and HTTP/2 limits, shutdown, logging.
import { isIP } from 'node:net';
import { ConfigError } from '../../../lib/config/error.js';
import { bool, csv, duration, flagsOf, int, optionalPath, type OptionGroup } from './flag.js';
import { opensslCiphers, tlsVersion, type TlsVersion } from '../tlsnames.js';

export interface ServingOptions {
  readonly bindAddress: string;
  readonly securePort: number;
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  /** --tls-min-version (Go's name given; Node's kept). */
  readonly tlsMinVersion: TlsVersion;
  /** --tls-cipher-suites as an OpenSSL cipher list; undefined = Node's defaults. */
  readonly tlsCipherSuites: string | undefined;
  readonly livezGracePeriodMs: number;
  readonly shutdownDelayMs: number;
  /** Keep listening after the shutdown delay, answering 429 with Retry-After, until in-flight requests drain. */
  readonly shutdownSendRetryAfter: boolean;
  readonly maxRequestBodyBytes: number;
  /** Deadline of a request that is not long-running (the `timeout` query parameter may shorten it). */
  readonly requestTimeoutMs: number;
  /** A watch without timeoutSeconds ends at a random point between this and twice this. */
  readonly minRequestTimeoutS: number;
  /** SETTINGS_MAX_CONCURRENT_STREAMS of each HTTP/2 connection. */
  readonly http2MaxStreamsPerConnection: number;
  /** Most connections one remote address may hold open; 0 = no cap (kube has none). */
  readonly maxConnectionsPerClientAddress: number;
  /** Share of HTTP/2 requests after which the client is sent GOAWAY (0 to 0.02). */
  readonly goawayChance: number;
  readonly verbosity: number;
}

const flag = flagsOf<ServingOptions>();

export const serving: OptionGroup<ServingOptions> = {
  title: 'Serving',
  defaults: {
    bindAddress: '127.0.0.1',
    securePort: 6443,
    tlsCertFile: undefined,
    tlsPrivateKeyFile: undefined,
    tlsMinVersion: 'TLSv1.2',
    tlsCipherSuites: undefined,
    livezGracePeriodMs: 0,
    shutdownDelayMs: 0,
    shutdownSendRetryAfter: false,
    maxRequestBodyBytes: 3 * 1024 * 1024,
    requestTimeoutMs: 60_000,
    minRequestTimeoutS: 1800,
    http2MaxStreamsPerConnection: 1000,
    maxConnectionsPerClientAddress: 1000,
    goawayChance: 0,
    verbosity: 0,
  },
  flags: [
    flag({
      name: 'bind-address',
      key: 'bindAddress',
      arg: 'ip',
      help: 'The IP address to listen on (0.0.0.0 or :: for all interfaces)',
      parse: (raw) => {
        if (!isIP(raw)) throw new ConfigError('must be an IP address');
        return raw;
      },
    }),
    flag({
      name: 'secure-port',
      key: 'securePort',
      arg: 'port',
      help: 'The port to serve HTTPS on',
      parse: (raw) => int(raw, 1, 65535, 'must be an integer between 1 and 65535'),
    }),
    flag({ name: 'tls-cert-file', key: 'tlsCertFile', arg: 'file', help: 'Serving certificate (PEM); default: the generated dev PKI', parse: optionalPath }),
    flag({ name: 'tls-private-key-file', key: 'tlsPrivateKeyFile', arg: 'file', help: 'Private key of --tls-cert-file', parse: optionalPath }),
    flag({ name: 'tls-min-version', key: 'tlsMinVersion', arg: 'version', help: 'Lowest TLS version served: VersionTLS12 or VersionTLS13', parse: tlsVersion }),
    flag({
      name: 'tls-cipher-suites',
      key: 'tlsCipherSuites',
      arg: 'suite,…',
      help: "TLS 1.2 cipher suites served, by Go's names (TLS 1.3's are always on, as in Go); default: Node's",
      parse: (raw) => (csv(raw).length > 0 ? opensslCiphers(csv(raw)) : undefined),
    }),
    flag({
      name: 'livez-grace-period',
      key: 'livezGracePeriodMs',
      arg: 'duration',
      help: 'Time after start during which /livez does not fail',
      parse: (raw) => duration(raw, false),
    }),
    flag({
      name: 'shutdown-delay-duration',
      key: 'shutdownDelayMs',
      arg: 'duration',
      help: 'Time to keep serving after a shutdown signal while /readyz fails',
      parse: (raw) => duration(raw, false),
    }),
    flag({
      name: 'shutdown-send-retry-after',
      key: 'shutdownSendRetryAfter',
      arg: 'bool',
      boolean: true,
      help: 'After --shutdown-delay-duration, keep the listener open and answer new requests 429 with Retry-After until in-flight requests drain, then stop listening',
      parse: bool,
    }),
    flag({
      name: 'max-request-body-bytes',
      key: 'maxRequestBodyBytes',
      arg: 'bytes',
      help: 'Largest accepted request body',
      parse: (raw) => int(raw, 1, Number.MAX_SAFE_INTEGER, 'must be a positive integer'),
    }),
    flag({
      name: 'request-timeout',
      key: 'requestTimeoutMs',
      arg: 'duration',
      help: 'Deadline of requests that are not long-running (watches and upgrades are); the timeout query parameter may shorten it',
      parse: (raw) => duration(raw, true),
    }),
    flag({
      name: 'min-request-timeout',
      key: 'minRequestTimeoutS',
      arg: 'seconds',
      help: 'A watch without timeoutSeconds ends at a random point between this many seconds and twice that, so clients spread their reconnects',
      parse: (raw) => int(raw, 1, 2 ** 31 - 1, 'must be a positive number of seconds'),
    }),
    flag({
      name: 'http2-max-streams-per-connection',
      key: 'http2MaxStreamsPerConnection',
      arg: 'int',
      help: 'Most concurrent streams a client may open on one HTTP/2 connection',
      parse: (raw) => int(raw, 1, 2 ** 31 - 1, 'must be a positive integer'),
    }),
    flag({
      name: 'max-connections-per-client-address',
      key: 'maxConnectionsPerClientAddress',
      arg: 'int',
      help: 'Most connections one client address may hold open at once (more are closed before the TLS handshake); behind a load balancer that hides client addresses, raise it or set 0 = no cap',
      parse: (raw) => int(raw, 0, 2 ** 31 - 1, 'must be a non-negative integer'),
    }),
    flag({
      name: 'goaway-chance',
      key: 'goawayChance',
      arg: 'fraction',
      help: 'Share of HTTP/2 requests after which the client is told to reconnect (GOAWAY), so long-lived clients spread over replicas; 0 (off) to 0.02',
      parse: (raw) => {
        const n = /^(0|0?\.[0-9]+)$/.test(raw) ? Number(raw) : NaN;
        if (!(n >= 0 && n <= 0.02)) throw new ConfigError('must be a number from 0 to 0.02');
        return n;
      },
    }),
    flag({
      name: 'v',
      key: 'verbosity',
      arg: 'level',
      help: "Log verbosity, as kube-apiserver's klog levels: from 3 one line per request (kube's httplog: verb, URI, latency, user agent, audit ID, client, user, code), from 6 also the request's and the answer's headers (never bodies or credentials)",
      parse: (raw) => int(raw, 0, 10, 'must be an integer between 0 and 10'),
    }),
  ],
  checks(o) {
    if ((o.tlsCertFile === undefined) !== (o.tlsPrivateKeyFile === undefined)) return ['--tls-cert-file and --tls-private-key-file must be given together'];
    return [];
  },
};
