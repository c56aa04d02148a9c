// What the caller may do: the authorizer chain, its files and the webhook caches.
import { ConfigError } from '../../../lib/config/error.js';
import { csv, duration, flagsOf, optionalPath, type OptionGroup } from './flag.js';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Node', 'ABAC', 'Webhook'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

export interface AuthorizationOptions {
  readonly authorizationModes: readonly AuthorizationMode[];
  /** --authorization-config (excludes --authorization-mode and --authorization-webhook-*). */
  readonly authorizationConfig: string | undefined;
  readonly authorizationPolicyFile: string | undefined;
  readonly authorizationWebhookConfigFile: string | undefined;
  readonly authorizationWebhookVersion: 'v1' | 'v1beta1';
  readonly authorizationWebhookCacheAuthorizedTtlMs: number;
  readonly authorizationWebhookCacheUnauthorizedTtlMs: number;
}

const flag = flagsOf<AuthorizationOptions>();

export const authorization: OptionGroup<AuthorizationOptions> = {
  title: 'Authorization',
  defaults: {
    // Secure by default, as kube-apiserver.
    authorizationModes: ['Node', 'RBAC'],
    authorizationConfig: undefined,
    authorizationPolicyFile: undefined,
    authorizationWebhookConfigFile: undefined,
    authorizationWebhookVersion: 'v1beta1',
    authorizationWebhookCacheAuthorizedTtlMs: 5 * 60_000,
    authorizationWebhookCacheUnauthorizedTtlMs: 30_000,
  },
  flags: [
    flag({
      name: 'authorization-mode',
      key: 'authorizationModes',
      arg: 'mode,…',
      list: true,
      help: `Ordered authorizers: ${AUTHORIZATION_MODES.join(', ')}`,
      parse: authorizationModes,
    }),
    flag({
      name: 'authorization-config',
      key: 'authorizationConfig',
      arg: 'file',
      help: 'AuthorizationConfiguration file (ordered authorizers, several webhooks, reloaded on change); excludes --authorization-mode and --authorization-webhook-*',
      parse: optionalPath,
    }),
    flag({
      name: 'authorization-policy-file',
      key: 'authorizationPolicyFile',
      arg: 'file',
      help: 'ABAC policy file: one JSON policy per line (with --authorization-mode=ABAC)',
      parse: optionalPath,
    }),
    flag({
      name: 'authorization-webhook-config-file',
      key: 'authorizationWebhookConfigFile',
      arg: 'file',
      help: 'Kubeconfig-format file naming an https authorization webhook (SubjectAccessReview; with --authorization-mode=Webhook)',
      parse: optionalPath,
    }),
    flag({
      name: 'authorization-webhook-version',
      key: 'authorizationWebhookVersion',
      arg: 'v1beta1|v1',
      help: 'authorization.k8s.io SubjectAccessReview version sent to the authorization webhook',
      parse: (raw) => {
        if (raw !== 'v1' && raw !== 'v1beta1') throw new ConfigError('must be v1 or v1beta1');
        return raw;
      },
    }),
    flag({
      name: 'authorization-webhook-cache-authorized-ttl',
      key: 'authorizationWebhookCacheAuthorizedTtlMs',
      arg: 'duration',
      help: 'How long allow answers of the authorization webhook are cached',
      parse: (raw) => duration(raw, false),
    }),
    flag({
      name: 'authorization-webhook-cache-unauthorized-ttl',
      key: 'authorizationWebhookCacheUnauthorizedTtlMs',
      arg: 'duration',
      help: 'How long other answers of the authorization webhook are cached',
      parse: (raw) => duration(raw, false),
    }),
  ],
  checks(o, given) {
    const out: string[] = [];
    const modes = o.authorizationModes;
    if (new Set(modes).size !== modes.length) {
      const dup = modes.find((m, i) => modes.indexOf(m) !== i)!;
      out.push(`invalid value "${dup}" for --authorization-mode: mode given more than once`);
    }
    // Sidecar mode has its own rules (sidecar.ts).
    if (o.upstream === undefined) out.push(...authorizationFlagChecks(o, given));
    return out;
  },
};

function authorizationModes(raw: string): AuthorizationMode[] {
  const modes = csv(raw);
  if (modes.length === 0) throw new ConfigError('at least one mode is required');
  const seen = new Set<string>();
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) throw new ConfigError(`unknown mode (one of ${AUTHORIZATION_MODES.join(', ')})`, { value: m });
    if (seen.has(m)) throw new ConfigError('mode given more than once', { value: m });
    seen.add(m);
  }
  return modes as AuthorizationMode[];
}

/** kube's rules for the authorization flags: the configuration file excludes the mode and webhook flags; each file needs its mode. */
function authorizationFlagChecks(o: AuthorizationOptions, given: ReadonlySet<string>): string[] {
  const out: string[] = [];
  if (o.authorizationConfig !== undefined) {
    const clash = [
      'authorization-mode',
      'authorization-webhook-config-file',
      'authorization-webhook-version',
      'authorization-webhook-cache-authorized-ttl',
      'authorization-webhook-cache-unauthorized-ttl',
    ].filter((n) => given.has(n));
    if (clash.length > 0) out.push(`--authorization-config and ${clash.map((n) => `--${n}`).join(', ')} are mutually exclusive`);
    return out;
  }
  const modes: readonly string[] = o.authorizationModes;
  if (modes.includes('ABAC') && o.authorizationPolicyFile === undefined) out.push('--authorization-mode=ABAC requires --authorization-policy-file');
  if (!modes.includes('ABAC') && o.authorizationPolicyFile !== undefined) out.push('--authorization-policy-file requires ABAC in --authorization-mode');
  if (modes.includes('Webhook') && o.authorizationWebhookConfigFile === undefined)
    out.push('--authorization-mode=Webhook requires --authorization-webhook-config-file');
  if (!modes.includes('Webhook') && o.authorizationWebhookConfigFile !== undefined)
    out.push('--authorization-webhook-config-file requires Webhook in --authorization-mode');
  return out;
}
