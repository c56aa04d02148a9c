// Builds the OIDC token authenticator from the serve options, once per
// start: from --oidc-* flags or from --authentication-config (then also the
// reload controller). Returns undefined when neither is given.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../../lib/config/error.js';
import { jwtFromFlags, parseAuthenticationConfig } from '../../config/authnconfig.js';
import type { ServeOptions } from '../../config/flags.js';
import { authnConfigMetrics } from '../../metrics/authnconfig.js';
import { apiServerIdHash } from '../../metrics/registry.js';
import { JwtAuthenticator, type JwtAuthenticatorOptions } from './authenticator.js';
import { FileReloader } from '../../config/filereload.js';
import type { AuthenticationConfig } from '../../config/authnconfig-types.js';

type OidcOptions = Pick<
  ServeOptions,
  | 'oidcIssuerUrl'
  | 'oidcClientId'
  | 'oidcUsernameClaim'
  | 'oidcUsernamePrefix'
  | 'oidcGroupsClaim'
  | 'oidcGroupsPrefix'
  | 'oidcRequiredClaims'
  | 'oidcCaFile'
  | 'oidcSigningAlgs'
  | 'authenticationConfig'
>;

export interface OidcStartOptions extends Omit<JwtAuthenticatorOptions, 'apiAudiences'> {
  readonly apiAudiences?: readonly string[];
  /** The service-account issuers, which no JWT authenticator may claim. */
  readonly serviceAccountIssuers?: readonly string[];
  /** Identity for the `apiserver_id_hash` metric label. */
  readonly apiServerId?: string;
  readonly pollIntervalMs?: number;
}

export interface RunningOidc {
  readonly authenticator: JwtAuthenticator;
  readonly controller?: FileReloader<AuthenticationConfig>;
  close(): void;
}

export async function startOidc(o: OidcOptions, opts: OidcStartOptions): Promise<RunningOidc | undefined> {
  const jwtOpts: JwtAuthenticatorOptions = { ...opts, apiAudiences: opts.apiAudiences ?? [] };
  if (o.oidcIssuerUrl !== undefined && o.oidcClientId !== undefined) {
    let caPem: string | undefined;
    if (o.oidcCaFile !== undefined) {
      try {
        caPem = await readFile(o.oidcCaFile, 'utf8');
      } catch (err) {
        throw new ConfigError(err instanceof Error ? err.message : String(err), { flag: '--oidc-ca-file', value: o.oidcCaFile });
      }
    }
    const spec = jwtFromFlags({
      issuerUrl: o.oidcIssuerUrl,
      clientId: o.oidcClientId,
      usernameClaim: o.oidcUsernameClaim,
      usernamePrefix: o.oidcUsernamePrefix,
      groupsClaim: o.oidcGroupsClaim,
      groupsPrefix: o.oidcGroupsPrefix,
      requiredClaims: o.oidcRequiredClaims,
      caPem,
      signingAlgs: o.oidcSigningAlgs,
    });
    const authenticator = await JwtAuthenticator.create([spec], jwtOpts);
    return { authenticator, close: () => authenticator.close() };
  }
  const path = o.authenticationConfig;
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(err instanceof Error ? err.message : String(err), { flag: '--authentication-config', value: path });
  }
  const parse = (t: string) => parseAuthenticationConfig(t, path, { disallowedIssuers: opts.serviceAccountIssuers ?? [] });
  const first = parse(text);
  if ('error' in first) throw new ConfigError(first.error);
  const authenticator = await JwtAuthenticator.create(first.config.jwt, jwtOpts);
  const controller = new FileReloader<AuthenticationConfig>({
    paths: [path],
    initialTexts: [text],
    what: 'authentication config',
    build: ([t]) => {
      const p = parse(t);
      if ('error' in p) throw new ConfigError(p.error);
      return p.config;
    },
    apply: (c) => authenticator.replace(c.jwt),
    metrics: authnConfigMetrics(apiServerIdHash(opts.apiServerId ?? `apiserver-${randomUUID()}`)),
    log: opts.log,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.pollIntervalMs ? { pollIntervalMs: opts.pollIntervalMs } : {}),
  });
  controller.start();
  return {
    authenticator,
    controller,
    close: () => {
      controller.stop();
      authenticator.close();
    },
  };
}
