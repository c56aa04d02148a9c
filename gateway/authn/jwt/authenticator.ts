// The OIDC token authenticator: routes a token by its unverified `iss` to
// the issuer's authenticator (another issuer's token is "not mine", with no
// signature work), caches decisions per configuration, and swaps its whole
// configuration atomically on reload. Tokens are audience-agnostic as in
// kube: valid for the API server's own audiences.
import { createHash } from 'node:crypto';
import type { JwtAuthenticatorSpec } from '../../config/authnconfig-types.js';
import { MAX_TOKEN_BYTES, type BearerToken, type TokenAuthenticator } from '../token.js';
import { CachedTokenAuthenticator } from '../tokencache.js';
import type { AuthnResult } from '../types.js';
import { AUTHENTICATOR_NAME, IssuerAuthenticator } from './issuer.js';
import { KeySource, type KeySourceOptions } from './keys.js';
import { unverifiedIssuer } from './peek.js';

export interface JwtAuthenticatorOptions {
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  /** The API server's audiences; a caller asking for others gets "not mine". */
  readonly apiAudiences: readonly string[];
  readonly successTtlMs?: number;
  readonly failureTtlMs?: number;
  /** How long start and reload wait for a first key load before going on without it. */
  readonly firstLoadWaitMs?: number;
  readonly keys?: Omit<KeySourceOptions, 'log' | 'clock'>;
}

interface Snapshot {
  readonly byIssuer: ReadonlyMap<string, IssuerAuthenticator>;
  readonly sources: ReadonlyMap<string, KeySource>;
  readonly cached: TokenAuthenticator;
}

function sourceKey(s: JwtAuthenticatorSpec): string {
  const { url, discoveryURL, certificateAuthority } = s.issuer;
  return createHash('sha256')
    .update(JSON.stringify([url, discoveryURL ?? '', certificateAuthority ?? '']))
    .digest('hex');
}

export class JwtAuthenticator implements TokenAuthenticator {
  readonly name = AUTHENTICATOR_NAME;
  private snapshot: Snapshot;
  private readonly clock: () => number;

  private constructor(private readonly opts: JwtAuthenticatorOptions) {
    this.clock = opts.clock ?? Date.now;
    this.snapshot = { byIssuer: new Map(), sources: new Map(), cached: this.cache(new Map()) };
  }

  static async create(specs: readonly JwtAuthenticatorSpec[], opts: JwtAuthenticatorOptions): Promise<JwtAuthenticator> {
    const a = new JwtAuthenticator(opts);
    await a.replace(specs);
    return a;
  }

  /** The issuers whose keys are loaded, for health and tests. */
  issuers(): Array<{ url: string; ready: boolean; fetches: number }> {
    return [...this.snapshot.byIssuer.values()].map((i) => ({ url: i.spec.issuer.url, ready: i.keys.ready, fetches: i.keys.fetches }));
  }

  /** Builds the new configuration (reusing key sources of unchanged issuers), then swaps it in. */
  async replace(specs: readonly JwtAuthenticatorSpec[]): Promise<void> {
    const old = this.snapshot;
    const sources = new Map<string, KeySource>();
    const fresh: KeySource[] = [];
    const byIssuer = new Map<string, IssuerAuthenticator>();
    for (const spec of specs) {
      const key = sourceKey(spec);
      let src = sources.get(key) ?? old.sources.get(key);
      if (!src) {
        src = new KeySource(spec.issuer, { log: this.opts.log, clock: this.clock, ...this.opts.keys });
        fresh.push(src);
      }
      sources.set(key, src);
      byIssuer.set(spec.issuer.url, new IssuerAuthenticator(spec, src, this.clock));
    }
    const wait = this.opts.firstLoadWaitMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(fresh.map((s) => s.start())),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, wait);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    this.snapshot = { byIssuer, sources, cached: this.cache(byIssuer) };
    for (const [key, src] of old.sources) if (!sources.has(key)) src.stop();
  }

  close(): void {
    for (const src of this.snapshot.sources.values()) src.stop();
    this.snapshot = { byIssuer: new Map(), sources: new Map(), cached: this.cache(new Map()) };
  }

  async authenticateToken(token: BearerToken, audiences: readonly string[]): Promise<AuthnResult | null> {
    let auds: string[] | undefined;
    if (audiences.length > 0) {
      auds = this.opts.apiAudiences.filter((a) => audiences.includes(a));
      if (auds.length === 0) return null;
    }
    // The cache keeps the result for these audiences, so a hit hands back the same object
    // (and the union's system:authenticated copy of it) instead of a new one per request.
    return this.snapshot.cached.authenticateToken(token, auds ?? []);
  }

  private cache(byIssuer: ReadonlyMap<string, IssuerAuthenticator>): TokenAuthenticator {
    const route: TokenAuthenticator = {
      name: AUTHENTICATOR_NAME,
      authenticateToken: async (token, audiences) => {
        const iss = unverifiedIssuer(token.value, MAX_TOKEN_BYTES);
        const a = iss === undefined ? undefined : byIssuer.get(iss);
        const r = a ? await a.authenticate(token.value) : null;
        if (!r) return r;
        // Stamped on the object the cache keeps, so a cache hit names its method and issuer too.
        return Object.freeze({
          ...r,
          ...(audiences.length > 0 ? { audiences: Object.freeze([...audiences]) } : {}),
          method: AUTHENTICATOR_NAME,
          ...(iss !== undefined ? { issuer: iss } : {}),
        });
      },
    };
    return new CachedTokenAuthenticator(route, {
      successTtlMs: this.opts.successTtlMs ?? 10_000,
      failureTtlMs: this.opts.failureTtlMs ?? 0,
      clock: this.clock,
    });
  }
}
