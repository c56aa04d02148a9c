// Client-certificate authentication (--client-ca-file, several CAs). The TLS
// server asks for certificates signed by any CA it knows (client CAs and the
// request-header CA), so the chain is verified here against the client CAs
// only (signatures, validity windows, clientAuth usage; certchain.ts), not
// taken from the handshake's `authorized`. A verified certificate maps to a
// user: CN = username, each O = a group. Decisions are kept per TLS
// connection (its certificate never changes) until the chain expires.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { X509Certificate } from 'node:crypto';
import type { Authenticator, AuthnResult } from './types.js';
import { AuthnError } from './types.js';
import { CertChainError, parseCaBundle, peerIntermediates, peerLeaf, verifyClientChain } from './certchain.js';

type Decision = { result: AuthnResult | null; until: number } | { error: string };

function asList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

export interface X509Options {
  /** PEM text of each --client-ca-file. */
  caPems: readonly string[];
  clock?: () => number;
}

export class X509Authenticator implements Authenticator {
  readonly name = 'x509';
  private readonly anchors: readonly X509Certificate[];
  private readonly clock: () => number;
  private readonly perConnection = new WeakMap<TLSSocket, Decision>();

  constructor(opts: X509Options) {
    this.anchors = parseCaBundle(opts.caPems, '--client-ca-file');
    this.clock = opts.clock ?? Date.now;
  }

  authenticate(req: IncomingMessage): AuthnResult | null {
    const socket = req.socket as TLSSocket;
    if (typeof socket.getPeerCertificate !== 'function') return null;
    const now = this.clock();
    const cached = this.perConnection.get(socket);
    if (cached !== undefined && ('error' in cached || cached.until >= now)) {
      if ('error' in cached) throw new AuthnError(this.name, cached.error);
      return cached.result;
    }
    const decision = this.decide(socket, now);
    this.perConnection.set(socket, decision);
    if ('error' in decision) throw new AuthnError(this.name, decision.error);
    return decision.result;
  }

  private decide(socket: TLSSocket, now: number): Decision {
    const peer = peerLeaf(socket);
    if (!peer) return { result: null, until: Number.MAX_SAFE_INTEGER };
    let until: number;
    try {
      // The chain the client sent is read only when the leaf is not issued by a client CA directly.
      until = verifyClientChain([peer.cert], this.anchors, now, () => peerIntermediates(socket));
    } catch (err) {
      // A presented but unverifiable certificate is a failed credential, not an absent one.
      if (err instanceof CertChainError) return { error: `client certificate rejected: ${err.message}` };
      throw err;
    }
    const cn = asList(peer.leaf.subject?.CN)[0];
    if (!cn) return { error: 'client certificate has no common name' };
    const result: AuthnResult = Object.freeze({
      user: Object.freeze({ username: cn, groups: Object.freeze([...asList(peer.leaf.subject?.O)]) as string[] }),
      expiresAt: until,
    });
    return { result, until };
  }
}
