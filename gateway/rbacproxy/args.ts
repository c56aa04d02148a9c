// kube-rbac-proxy's command line, read with its meaning and turned into
// `gatehouse serve` flags (sidecar mode), so its Deployments run by changing
// the image and the command's first words. Every kube-rbac-proxy flag is
// either translated, accepted without effect (klog's --logtostderr and
// --alsologtostderr: Gatehouse always logs to stderr), or refused with a
// message naming it; an unknown flag is refused as well, never ignored.
import { isIP } from 'node:net';

interface Translated {
  /** Serve flags for this flag's value; `bool`: the flag takes no separate value. */
  readonly to: (value: string) => string[];
  readonly bool?: true;
}
type Rule = Translated | { readonly refused: string; readonly bool?: true };

const same = (name: string) => (v: string) => [`--${name}=${v}`];
const dropped = () => [];

function listenAddress(v: string): string[] {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):([0-9]+)$/.exec(v);
  if (!m) throw new Error(`invalid value "${v}" for --secure-listen-address: must be host:port`);
  const host = m[1] ?? m[2] ?? '';
  if (host !== '' && isIP(host) === 0) throw new Error(`invalid value "${v}" for --secure-listen-address: the host must be an IP address`);
  return [`--bind-address=${host === '' ? '0.0.0.0' : host}`, `--secure-port=${m[3]}`];
}

const NOT_YET = 'is not supported by Gatehouse yet';

const RULES: Readonly<Record<string, Rule>> = Object.freeze({
  'secure-listen-address': { to: listenAddress },
  'insecure-listen-address': { to: same('insecure-listen-address') },
  upstream: { to: same('upstream') },
  'upstream-ca-file': { to: same('upstream-ca-file') },
  'upstream-client-cert-file': { to: same('upstream-client-cert-file') },
  'upstream-client-key-file': { to: same('upstream-client-key-file') },
  'upstream-force-h2c': { to: (v) => [`--upstream-force-h2c=${v}`], bool: true },
  'config-file': { to: same('resource-attributes') },
  'allow-paths': { to: same('allow-paths') },
  'ignore-paths': { to: same('ignore-paths') },
  'proxy-endpoints-port': { to: same('proxy-endpoints-port') },
  'tls-cert-file': { to: same('tls-cert-file') },
  'tls-private-key-file': { to: same('tls-private-key-file') },
  'tls-min-version': { to: same('tls-min-version') },
  'tls-cipher-suites': { to: same('tls-cipher-suites') },
  'tls-reload-interval': { refused: 'is deprecated and not supported: the serving certificate is reloaded when its files change' },
  'client-ca-file': { to: same('client-ca-file') },
  'auth-header-fields-enabled': { to: (v) => [`--auth-header-fields-enabled=${v}`], bool: true },
  'auth-header-user-field-name': { to: same('auth-header-user-field-name') },
  'auth-header-groups-field-name': { to: same('auth-header-groups-field-name') },
  'auth-header-groups-field-separator': { to: same('auth-header-groups-field-separator') },
  'auth-token-audiences': { to: same('api-audiences') },
  'oidc-issuer': { to: same('oidc-issuer-url') },
  'oidc-clientID': { to: same('oidc-client-id') },
  'oidc-groups-claim': { to: same('oidc-groups-claim') },
  'oidc-username-claim': { to: same('oidc-username-claim') },
  'oidc-groups-prefix': { to: same('oidc-groups-prefix') },
  'oidc-username-prefix': { to: same('oidc-username-prefix') },
  'oidc-sign-alg': { to: same('oidc-signing-algs') },
  'oidc-ca-file': { to: same('oidc-ca-file') },
  kubeconfig: { to: same('kubeconfig') },
  'disable-http2-serving': { refused: NOT_YET, bool: true },
  v: { to: (v) => [`-v=${v}`] },
  logtostderr: { to: dropped, bool: true },
  alsologtostderr: { to: dropped, bool: true },
});

const TRUE = ['1', 't', 'T', 'true', 'TRUE', 'True'];
const FALSE = ['0', 'f', 'F', 'false', 'FALSE', 'False'];

export interface TranslatedArgs {
  readonly args: string[];
}

/**
 * kube-rbac-proxy's arguments → `gatehouse serve` arguments, or one line
 * naming every flag refused. `dataDir`: where the sidecar keeps its
 * generated serving certificate when --tls-cert-file is not given (as
 * kube-rbac-proxy generates a self-signed one); undefined: serve's default.
 */
export function translateArgs(argv: readonly string[], dataDir: string | undefined): TranslatedArgs | { error: string } {
  // kube-rbac-proxy's own defaults where Gatehouse's differ: OIDC claims (email, groups), all interfaces.
  const out: string[] = dataDir === undefined ? [] : [`--data-dir=${dataDir}`];
  const problems: string[] = [];
  let listen = false;
  let oidc = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      problems.push(`unexpected argument "${arg}"`);
      continue;
    }
    const name = m[1]!;
    const rule = Object.hasOwn(RULES, name) ? RULES[name] : undefined;
    if (!rule) {
      problems.push(`unknown kube-rbac-proxy flag: --${name}`);
      continue;
    }
    let value = m[2];
    if (rule.bool) {
      value ??= 'true';
      if (!TRUE.includes(value) && !FALSE.includes(value)) {
        problems.push(`invalid value "${value}" for --${name}: must be true or false`);
        continue;
      }
    } else if (value === undefined) {
      value = argv[++i];
      if (value === undefined) {
        problems.push(`flag needs an argument: --${name}`);
        continue;
      }
    }
    if ('refused' in rule) {
      // A refused boolean set to false asks for nothing.
      if (!(rule.bool && FALSE.includes(value))) problems.push(`--${name} ${rule.refused}`);
      continue;
    }
    try {
      out.push(...rule.to(value));
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
      continue;
    }
    if (name === 'secure-listen-address') listen = true;
    if (name === 'oidc-issuer') oidc = true;
  }
  if (!listen && problems.length === 0) problems.push('--secure-listen-address is required');
  if (problems.length > 0) return { error: problems.join('; ') };
  // Given first, so the command line's own values (scalars keep the last) win.
  const defaults = oidc ? ['--oidc-username-claim=email', '--oidc-groups-claim=groups'] : [];
  return { args: [...defaults, ...out] };
}
