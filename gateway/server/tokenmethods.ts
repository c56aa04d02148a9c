// Builds, once per start, the token methods that live here:
// static tokens (--token-auth-file), bootstrap tokens
// (--enable-bootstrap-token-auth) and service-account tokens (signing for
// TokenRequest, verification with every --service-account-key-file key).
// Files are read and validated here, so a bad file fails the start with a
// line naming the flag and the problem.
import { mkdir, readFile } from 'node:fs/promises';
import { createPublicKey } from 'node:crypto';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { DEV_ISSUER } from '../../lib/serviceaccount/claims.js';
import { ConfigError } from '../../lib/config/error.js';
import { keyId, parseSigningKey, parseVerificationKeys, type VerificationKey } from '../../lib/serviceaccount/keys.js';
import { TokenSigner } from '../../lib/serviceaccount/signer.js';
import type { TokenIssuing } from '../../backends/core/index.js';
import { devPkiPaths, ensureServiceAccountKeys } from '../../certs/devpki.js';
import type { ServeOptions } from '../config/flags.js';
import { BootstrapTokenAuthenticator } from '../authn/bootstrap.js';
import { ServiceAccountJwtVerifier, ServiceAccountTokenAuthenticator } from '../authn/serviceaccount.js';
import { StaticTokenAuthenticator } from '../authn/tokenfile.js';
import { CachedTokenAuthenticator } from '../authn/tokencache.js';
import type { TokenAuthenticator } from '../authn/token.js';

/** Service-account token settings after defaults: what signs, what verifies, for whom. */
export interface ServiceAccountSetup {
  readonly issuing: TokenIssuing;
  readonly issuers: readonly string[];
  readonly keys: readonly VerificationKey[];
  /** --api-audiences, or the issuers. */
  readonly apiAudiences: readonly string[];
  readonly devMode: boolean;
  /** Lines for the startup output (dev-mode defaults, key warnings), logged once the server listens. */
  readonly notes: readonly string[];
}

async function readFlagFile(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message, { flag: `--${flag}`, value: path });
  }
}

function keyFileProblem(flag: string, path: string, err: unknown): never {
  if (err instanceof ConfigError) throw err.forFlag(`--${flag}`, path);
  throw err;
}

/** Signing key, issuers, verification keys and audiences; dev defaults when neither key nor issuer is given. */
export async function loadServiceAccountSetup(opts: ServeOptions): Promise<ServiceAccountSetup> {
  const notes: string[] = [];
  const devMode = opts.serviceAccountSigningKeyFile === undefined && opts.serviceAccountIssuers.length === 0;
  let signingPath = opts.serviceAccountSigningKeyFile;
  const keyFiles = [...opts.serviceAccountKeyFiles];
  if (devMode) {
    const paths = devPkiPaths(opts.dataDir);
    await mkdir(paths.dir, { recursive: true, mode: 0o700 });
    await ensureServiceAccountKeys(paths.serviceAccountKey, paths.serviceAccountPub);
    signingPath = paths.serviceAccountKey;
    keyFiles.push(paths.serviceAccountPub);
  } else if (keyFiles.length === 0) {
    keyFiles.push(signingPath!);
  }
  const issuers = devMode ? [DEV_ISSUER] : [...opts.serviceAccountIssuers];
  const signingFlag = 'service-account-signing-key-file';
  const signingKey = await readFlagFile(signingFlag, signingPath!).then((pem) => {
    try {
      return parseSigningKey(pem, signingPath!);
    } catch (err) {
      return keyFileProblem(signingFlag, signingPath!, err);
    }
  });
  const keys: VerificationKey[] = [];
  for (const f of keyFiles) {
    const pem = await readFlagFile('service-account-key-file', f);
    try {
      keys.push(...parseVerificationKeys(pem, f));
    } catch (err) {
      keyFileProblem('service-account-key-file', f, err);
    }
  }
  const signer = new TokenSigner(signingKey, signingPath!);
  if (!keys.some((k) => k.kid === keyId(createPublicKey(signingKey)))) {
    notes.push(
      `service-account tokens: the signing key ${signingPath!} is not among the --service-account-key-file keys: tokens it signs will not verify here`,
    );
  }
  const apiAudiences = opts.apiAudiences.length > 0 ? [...opts.apiAudiences] : [...issuers];
  if (devMode) {
    notes.push(
      `service-account tokens: dev mode: signing with ${signingPath!} (${signer.alg}), issuer ${DEV_ISSUER}; ` +
        'set --service-account-signing-key-file and --service-account-issuer to choose them',
    );
  }
  const maxMs = opts.serviceAccountMaxTokenExpirationMs;
  return Object.freeze({
    issuing: Object.freeze({
      signer,
      issuer: issuers[0]!,
      apiAudiences: Object.freeze(apiAudiences),
      maxExpirationSeconds: maxMs > 0 ? Math.floor(maxMs / 1000) : undefined,
    }),
    issuers: Object.freeze(issuers),
    keys: Object.freeze(keys),
    apiAudiences: Object.freeze(apiAudiences),
    devMode,
    notes: Object.freeze(notes),
  });
}

/** Everything read from disk, before anything starts: a bad file fails the start cleanly. */
export interface LoadedTokenMethods {
  readonly serviceAccounts: ServiceAccountSetup;
  readonly staticTokens: StaticTokenAuthenticator | undefined;
}

export async function loadTokenMethods(opts: ServeOptions, log: (msg: string) => void): Promise<LoadedTokenMethods> {
  let staticTokens: StaticTokenAuthenticator | undefined;
  if (opts.tokenAuthFile) {
    const path = opts.tokenAuthFile;
    const text = await readFlagFile('token-auth-file', path);
    try {
      staticTokens = new StaticTokenAuthenticator(text, path, log);
    } catch (err) {
      if (err instanceof ConfigError) throw err.forFlag('--token-auth-file', path);
      throw err;
    }
  }
  return { serviceAccounts: await loadServiceAccountSetup(opts), staticTokens };
}

export interface TokenMethodsInput {
  opts: ServeOptions;
  loaded: LoadedTokenMethods;
  objects: ObjectSource;
  clock: () => number;
}

/** Static, bootstrap and service-account token methods, in that order (cheapest first). */
export function buildTokenMethods(i: TokenMethodsInput): TokenAuthenticator[] {
  const out: TokenAuthenticator[] = [];
  if (i.loaded.staticTokens) out.push(i.loaded.staticTokens);
  if (i.opts.enableBootstrapTokenAuth) out.push(new BootstrapTokenAuthenticator(i.objects, i.clock));
  const sa = i.loaded.serviceAccounts;
  const verifier = new ServiceAccountJwtVerifier({ keys: sa.keys, issuers: sa.issuers, apiAudiences: sa.apiAudiences, clock: i.clock });
  // Signature checks are the expensive part: cached by the whole token; the existence lookups run on every request.
  const cached = new CachedTokenAuthenticator(verifier, { successTtlMs: 10 * 60_000, failureTtlMs: 2_000, maxEntries: 10_000, clock: i.clock });
  out.push(new ServiceAccountTokenAuthenticator({ verifier: cached, objects: i.objects, lookup: i.opts.serviceAccountLookup }));
  return out;
}
