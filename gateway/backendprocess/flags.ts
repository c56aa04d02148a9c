// Which of `gatehouse serve`'s flags a backend process reads. The backend
// commands parse the whole table (one parser, one help text), so a flag a
// backend would silently ignore — a token file, a policy, RBAC, priority and
// fairness — is refused at start with one line naming it: an operator who
// passed it expects it to act, and in a backend process it cannot (the
// gateway authenticates, authorizes and queues every request first).
import type { ServeOptions } from '../config/flags.js';
import { csrSigning } from '../config/options/csrsigning.js';

export type BackendKind = 'sample-backend' | 'core-backend';

const READ_BY_BOTH = new Set([
  'bind-address',
  'secure-port',
  'data-dir',
  'storage-backend',
  'redis-url',
  'storage-prefix',
  'watch-history',
  'max-request-body-bytes',
  'tls-cert-file',
  'tls-private-key-file',
  'client-ca-file',
  'requestheader-client-ca-file',
  'requestheader-allowed-names',
  'requestheader-username-headers',
  'requestheader-uid-headers',
  'requestheader-group-headers',
  'requestheader-extra-headers-prefix',
  'anonymous-auth',
  'authorization-mode',
  'authorization-webhook-config-file',
  'authorization-webhook-version',
  'authorization-webhook-cache-authorized-ttl',
  'authorization-webhook-cache-unauthorized-ttl',
  'enable-priority-and-fairness',
  'max-requests-inflight',
  'max-mutating-requests-inflight',
  'request-timeout',
  'livez-grace-period',
  'shutdown-delay-duration',
  'shutdown-send-retry-after',
  'http2-max-streams-per-connection',
  'max-connections-per-client-address',
  'goaway-chance',
  'feature-gates',
  'tracing-config-file',
  'v',
]);

/**
 * The writing side of the built-in types runs in the core backend: token
 * issuing, controllers (csrsigning's CA and certificate lifetime among them),
 * the served types, watch timeouts.
 */
const READ_BY_CORE = new Set([
  'service-account-key-file',
  'service-account-signing-key-file',
  'service-account-issuer',
  'service-account-max-token-expiration',
  'api-audiences',
  'runtime-config',
  'controllers',
  'min-request-timeout',
  ...csrSigning.flags.map((f) => f.name),
]);

/** Leader election of the controllers and the server identity lease are the core backend's too. */
const READ_BY_CORE_PREFIXES = ['leader-elect', 'identity-lease-'];

function reads(kind: BackendKind, name: string): boolean {
  return (
    READ_BY_BOTH.has(name) ||
    name.startsWith('audit-') ||
    (kind === 'core-backend' && (READ_BY_CORE.has(name) || READ_BY_CORE_PREFIXES.some((p) => name.startsWith(p))))
  );
}

/** The flag names on the command line, as given (`--name=value`, `--name value`, `-v`). */
function givenNames(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    const m = /^--?([A-Za-z0-9][A-Za-z0-9-]*)(=|$)/.exec(a);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** The first flag this backend process would not honour, as one line naming it; undefined when all are read. */
export function unhonouredFlag(kind: BackendKind, argv: readonly string[], opts: ServeOptions): string | undefined {
  for (const name of givenNames(argv)) {
    if (!reads(kind, name))
      return `--${name} is not read by ${kind}: the gateway authenticates, authorizes and limits the requests it forwards (see gatehouse ${kind} --help)`;
  }
  const given = new Set(givenNames(argv));
  if (given.has('enable-priority-and-fairness') && opts.enablePriorityAndFairness)
    return `--enable-priority-and-fairness: ${kind} keeps the plain in-flight limits (the gateway queued each request by priority and fairness already): it must be false or unset`;
  if (given.has('authorization-mode') && (opts.authorizationModes.length !== 1 || opts.authorizationModes[0] !== 'Webhook'))
    return `--authorization-mode: ${kind} authorizes through the gateway's SubjectAccessReview (--authorization-webhook-config-file): it must be Webhook or unset`;
  return undefined;
}
