// The signing keys of one issuer: discovery and the JWKS are fetched at
// start and retried in the background while the provider is unreachable;
// requests never wait for a first load. An unknown `kid` refetches the JWKS,
// at most once per cooldown, and concurrent misses share one fetch.
import type { createLocalJWKSet, JSONWebKeySet, JWTVerifyGetKey } from 'jose';
import type { IssuerSpec } from '../../config/authnconfig-types.js';
import { describe, discover } from './discovery.js';
import { httpsFetcher, type Fetcher } from './fetch.js';

export interface KeySourceOptions {
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  /** Minimum time between JWKS refetches caused by unknown key ids. */
  readonly refreshCooldownMs?: number;
  /** Background retry delays while the first load fails. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  readonly fetchTimeoutMs?: number;
}

export class KeysNotReady extends Error {}

export class KeySource {
  private local: ReturnType<typeof createLocalJWKSet> | undefined;
  private jwksUri: string | undefined;
  private lastKidRefresh = -Infinity;
  private refreshing: Promise<boolean> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastError = 'not loaded yet';
  private readonly fetcher: Fetcher;
  private readonly clock: () => number;
  private firstAttempt: Promise<void>;
  private settleFirst!: () => void;
  /** JWKS fetches made, for tests and logs. */
  fetches = 0;

  constructor(
    readonly issuer: IssuerSpec,
    private readonly opts: KeySourceOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
    this.fetcher = httpsFetcher({ ...(issuer.certificateAuthority ? { caPem: issuer.certificateAuthority } : {}), timeoutMs: opts.fetchTimeoutMs ?? 10_000 });
    this.firstAttempt = new Promise((resolve) => {
      this.settleFirst = resolve;
    });
  }

  get ready(): boolean {
    return this.local !== undefined;
  }

  /** Starts loading; resolves after the first attempt, successful or not. */
  start(): Promise<void> {
    void this.load(this.opts.retryMinMs ?? 1000);
    return this.firstAttempt;
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.fetcher.close();
  }

  /** For jose's jwtVerify: the key for a header, refetching once on an unknown kid. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const local = this.local;
    if (!local) throw new KeysNotReady(`keys of issuer ${JSON.stringify(this.issuer.url)} are not loaded: ${this.lastError}`);
    try {
      return await local(header, token);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err;
      if (!(await this.refreshForUnknownKey())) throw err;
      return this.local!(header, token);
    }
  };

  private async load(delay: number): Promise<void> {
    try {
      if (!this.jwksUri) this.jwksUri = (await discover(this.issuer, this.fetcher, this.opts.fetchTimeoutMs ?? 10_000)).jwksUri;
      await this.fetchKeys();
      this.opts.log(`oidc: loaded signing keys of issuer ${JSON.stringify(this.issuer.url)}`);
    } catch (err) {
      this.lastError = describe(err);
      if (this.stopped) return;
      this.opts.log(`oidc: cannot load signing keys of issuer ${JSON.stringify(this.issuer.url)} (retrying in ${delay}ms): ${this.lastError}`);
      this.retryTimer = setTimeout(() => void this.load(Math.min(delay * 2, this.opts.retryMaxMs ?? 30_000)), delay);
      this.retryTimer.unref();
    } finally {
      this.settleFirst();
    }
  }

  private async fetchKeys(): Promise<void> {
    this.fetches++;
    const res = await this.fetcher(this.jwksUri!);
    if (res.status !== 200) throw new Error(`JWKS request to ${JSON.stringify(this.jwksUri)} answered ${res.status}`);
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new Error(`JWKS at ${JSON.stringify(this.jwksUri)} is not JSON`);
    }
    const keys = (body as { keys?: unknown }).keys;
    if (!Array.isArray(keys) || keys.length === 0 || keys.some((k) => typeof k !== 'object' || k === null)) {
      throw new Error(`JWKS at ${JSON.stringify(this.jwksUri)} has no keys`);
    }
    // jose is imported on first use: its module loading is no part of a start (bench/startup.ts).
    const jose = await import('jose');
    this.local = jose.createLocalJWKSet(body as JSONWebKeySet);
  }

  private refreshForUnknownKey(): Promise<boolean> {
    if (this.refreshing) return this.refreshing;
    const now = this.clock();
    if (now - this.lastKidRefresh < (this.opts.refreshCooldownMs ?? 10_000)) return Promise.resolve(false);
    this.lastKidRefresh = now;
    this.refreshing = this.fetchKeys()
      .then(
        () => true,
        (err: unknown) => {
          this.opts.log(`oidc: refetching the JWKS of issuer ${JSON.stringify(this.issuer.url)} failed: ${describe(err)}`);
          return false;
        },
      )
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
