// Which callers may tell the forward-auth endpoint what the original request
// was. Forwarded method, URI and host headers are believed only from a proxy
// that proves it is one: a client certificate that chains to --client-ca-file
// with its CN in --forward-auth-proxy-names, or a connection from an address
// in --forward-auth-trusted-addresses (IPs or CIDRs). Anyone else could name
// a path they are allowed and be let through to another (a spoofed
// X-Forwarded-Uri), so they get a 400. Decided once per connection (and
// again when the CA bundle is reloaded or the certificate expires).
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ConfigError } from '../../lib/config/error.js';
import { connectionOf } from '../../lib/http/connection.js';
import { CertChainError, peerLeaf, peerIntermediates, verifyClientChain, type CaBundle, type CurrentCaBundle } from '../authn/certchain.js';

interface Verdict {
  readonly bundle: CaBundle;
  readonly trusted: boolean;
  readonly until: number;
}

/** `::ffff:10.0.0.1` is the IPv4 address it maps. */
function plainAddress(a: string): string {
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/** --forward-auth-trusted-addresses: IPs and CIDRs; a ConfigError names the entry at fault. */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const e of entries) {
    const [addr, bits, more] = e.split('/');
    const family = isIP(addr ?? '');
    if (family === 0 || more !== undefined) throw new ConfigError('must be an IP address or a CIDR', { value: e });
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) {
      list.addAddress(addr!, type);
      continue;
    }
    const n = /^[0-9]{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!(n >= 0 && n <= (family === 4 ? 32 : 128))) throw new ConfigError('prefix length out of range', { value: e });
    list.addSubnet(addr!, n, type);
  }
  return list;
}

export interface ProxyTrustOptions {
  /** The --client-ca-file bundle in force (proxy certificates chain to it). */
  readonly cas: CurrentCaBundle;
  /** --forward-auth-proxy-names: CNs of proxy certificates. */
  readonly names: readonly string[];
  /** --forward-auth-trusted-addresses. */
  readonly addresses: readonly string[];
  readonly clock: () => number;
}

export class ProxyTrust {
  readonly #cas: CurrentCaBundle;
  readonly #names: ReadonlySet<string>;
  readonly #addresses: BlockList | undefined;
  readonly #clock: () => number;
  readonly #perConnection = new WeakMap<object, Verdict>();

  constructor(o: ProxyTrustOptions) {
    this.#cas = o.cas;
    this.#names = new Set(o.names);
    this.#addresses = o.addresses.length > 0 ? addressList(o.addresses) : undefined;
    this.#clock = o.clock;
  }

  /** Whether anything is trusted at all (otherwise every forward-auth call is refused). */
  get configured(): boolean {
    return this.#names.size > 0 || this.#addresses !== undefined;
  }

  trusted(req: IncomingMessage): boolean {
    const now = this.#clock();
    const bundle = this.#cas.current;
    const conn = connectionOf(req);
    const v = this.#perConnection.get(conn);
    if (v !== undefined && v.bundle === bundle && v.until >= now) return v.trusted;
    const verdict = this.#decide(req, bundle, now);
    this.#perConnection.set(conn, verdict);
    return verdict.trusted;
  }

  #decide(req: IncomingMessage, bundle: CaBundle, now: number): Verdict {
    const forever = Number.MAX_SAFE_INTEGER;
    const addr = req.socket.remoteAddress;
    if (this.#addresses && addr !== undefined) {
      const a = plainAddress(addr);
      if (this.#addresses.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4')) return { bundle, trusted: true, until: forever };
    }
    if (this.#names.size === 0) return { bundle, trusted: false, until: forever };
    const socket = req.socket as TLSSocket;
    const peer = typeof socket.getPeerCertificate === 'function' ? peerLeaf(socket) : undefined;
    if (!peer) return { bundle, trusted: false, until: forever };
    try {
      const until = verifyClientChain([peer.cert], bundle.anchors, now, () => peerIntermediates(socket));
      const cn = peer.leaf.subject?.CN;
      const name = Array.isArray(cn) ? cn[0] : cn;
      return { bundle, trusted: name !== undefined && this.#names.has(name), until };
    } catch (err) {
      if (err instanceof CertChainError) return { bundle, trusted: false, until: forever };
      throw err;
    }
  }
}
