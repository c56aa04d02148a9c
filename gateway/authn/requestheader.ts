// Authenticating proxy (--requestheader-*): identity from request headers,
// trusted only when the connection's client certificate chains to
// --requestheader-client-ca-file and, when --requestheader-allowed-names is
// set, its CN is one of them. Username from the first listed header with a
// value; groups = every value of the group headers; extra from prefixed
// headers (prefix stripped, lowercased, percent-decoded). The proxy's
// certificate is checked once per connection and again when the CA bundle is
// reloaded (a removed CA stops being trusted on open connections too). The
// pipeline strips all these headers after authentication
// (identityHeaderNames below), so nothing later can read ones that were not
// trusted.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from '../../lib/api/meta.js';
import { AuthnError, type Authenticator, type AuthnResult } from './types.js';
import { CertChainError, peerChain, verifyClientChain, type CaBundle, type CurrentCaBundle } from './certchain.js';
import { ownValue, setOwn } from '../../lib/api/own.js';
import { distinctHeaders } from '../../lib/http/headers.js';
import { connectionOf } from '../../lib/http/connection.js';

export interface RequestHeaderConfig {
  readonly usernameHeaders: readonly string[];
  readonly uidHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
  readonly allowedNames: readonly string[];
}

/** Header names and prefixes that carry identity; always stripped, configured or not. */
export const DEFAULT_IDENTITY_HEADERS: Readonly<{ names: readonly string[]; prefixes: readonly string[] }> = Object.freeze({
  names: Object.freeze(['x-remote-user', 'x-remote-uid', 'x-remote-group']),
  prefixes: Object.freeze(['x-remote-extra-']),
});

/** Every identity header name and prefix (lowercase): the configured ones plus the X-Remote-* defaults. */
export function identityHeaderNames(cfg: RequestHeaderConfig | undefined): { names: readonly string[]; prefixes: readonly string[] } {
  const lower = (xs: readonly string[]) => xs.map((x) => x.toLowerCase());
  const names = new Set([
    ...DEFAULT_IDENTITY_HEADERS.names,
    ...lower(cfg?.usernameHeaders ?? []),
    ...lower(cfg?.uidHeaders ?? []),
    ...lower(cfg?.groupHeaders ?? []),
  ]);
  const prefixes = new Set([...DEFAULT_IDENTITY_HEADERS.prefixes, ...lower(cfg?.extraHeaderPrefixes ?? [])]);
  return Object.freeze({ names: Object.freeze([...names]), prefixes: Object.freeze([...prefixes]) });
}

type ProxyVerdict = { until: number } | { error: string } | 'no-certificate';
/** Made under `bundle`, and good only while it is the bundle in force. */
interface ProxyDecision {
  readonly bundle: CaBundle;
  readonly verdict: ProxyVerdict;
}

function current(d: ProxyDecision | undefined, bundle: CaBundle, now: number): d is ProxyDecision {
  return d !== undefined && d.bundle === bundle && !(typeof d.verdict === 'object' && 'until' in d.verdict && d.verdict.until < now);
}

function unescapeKey(k: string): string {
  try {
    return decodeURIComponent(k);
  } catch {
    return k;
  }
}

export class RequestHeaderAuthenticator implements Authenticator {
  readonly name = 'requestheader';
  private readonly cas: CurrentCaBundle;
  private readonly cfg: RequestHeaderConfig;
  private readonly lower: { user: string[]; uid: string[]; group: string[]; extra: string[] };
  private readonly perConnection = new WeakMap<object, ProxyDecision>();
  private readonly clock: () => number;

  /** `cas`: the --requestheader-client-ca-file bundle in force. */
  constructor(cas: CurrentCaBundle, cfg: RequestHeaderConfig, clock: () => number = Date.now) {
    this.cas = cas;
    this.cfg = cfg;
    this.clock = clock;
    const l = (xs: readonly string[]) => xs.map((x) => x.toLowerCase());
    this.lower = { user: l(cfg.usernameHeaders), uid: l(cfg.uidHeaders), group: l(cfg.groupHeaders), extra: l(cfg.extraHeaderPrefixes) };
  }

  authenticate(req: IncomingMessage): AuthnResult | null {
    // No identity header at all (the common request): nothing to read, no header table built.
    if (!this.lower.user.some((n) => req.headers[n] !== undefined)) return null;
    const headers = distinctHeaders(req);
    const first = (names: readonly string[]): string | undefined => {
      for (const n of names) for (const v of headers[n] ?? []) if (v !== '') return v;
      return undefined;
    };
    const username = first(this.lower.user);
    // No identity headers: not a proxied request (and nothing to verify).
    if (username === undefined) return null;
    const socket = req.socket as TLSSocket;
    // Headers without a client certificate are ignored (the pipeline strips them): anonymous, not 401.
    if (typeof socket.getPeerCertificate !== 'function' || !this.verifyProxy(socket, connectionOf(req))) return null;

    const groups: string[] = [];
    for (const n of this.lower.group) for (const v of headers[n] ?? []) groups.push(v);
    const extra: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(headers)) {
      for (const p of this.lower.extra) {
        if (!name.startsWith(p) || name.length === p.length || values === undefined) continue;
        const key = unescapeKey(name.slice(p.length).toLowerCase());
        const have = ownValue(extra, key) as string[] | undefined;
        if (have) have.push(...values);
        else setOwn(extra, key, [...values]);
      }
    }
    const uid = first(this.lower.uid);
    const user: UserInfo = { username, groups, ...(uid !== undefined ? { uid } : {}), ...(Object.keys(extra).length > 0 ? { extra } : {}) };
    return Object.freeze({ user, method: this.name });
  }

  /**
   * true when the connection's certificate is a trusted proxy's, false when it has none;
   * throws AuthnError for any other certificate. Cached per connection.
   */
  private verifyProxy(socket: TLSSocket, conn: object): boolean {
    const now = this.clock();
    const bundle = this.cas.current;
    let decision = this.perConnection.get(conn);
    if (!current(decision, bundle, now)) {
      decision = { bundle, verdict: this.decide(socket, bundle, now) };
      this.perConnection.set(conn, decision);
    }
    const d = decision.verdict;
    if (d === 'no-certificate') return false;
    if ('error' in d) throw new AuthnError(this.name, d.error);
    return true;
  }

  private decide(socket: TLSSocket, bundle: CaBundle, now: number): ProxyVerdict {
    const peer = peerChain(socket);
    if (!peer) return 'no-certificate';
    let until: number;
    try {
      until = verifyClientChain(peer.chain, bundle.anchors, now);
    } catch (err) {
      if (err instanceof CertChainError) return { error: `proxy certificate rejected: ${err.message}` };
      throw err;
    }
    const cn = peer.leaf.subject?.CN;
    const name = Array.isArray(cn) ? cn[0] : cn;
    if (this.cfg.allowedNames.length > 0 && (name === undefined || !this.cfg.allowedNames.includes(name))) {
      return { error: `proxy certificate common name "${name ?? ''}" is not in --requestheader-allowed-names` };
    }
    return { until };
  }
}
