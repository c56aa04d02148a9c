// Client-certificate authentication (--client-ca-file, several CAs). The TLS
// server asks for certificates signed by any CA it knows (client CAs and the
// request-header CA), so the chain is verified here against the client CAs
// only (signatures, validity windows, clientAuth usage; certchain.ts), not
// taken from the handshake's `authorized`. A verified certificate maps to a
// user: CN = username, each O = a group. Decisions are kept per TLS
// connection (its certificate never changes) until the chain expires or the
// client CA bundle is reloaded: as kube-apiserver checks every request
// against the bundle in force, a CA removed from the file stops
// authenticating connections that are already open.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Authenticator, AuthnResult } from './types.js';
import { AuthnError } from './types.js';
import { CertChainError, peerIntermediates, peerLeaf, verifyClientChain, type CaBundle, type CurrentCaBundle } from './certchain.js';
import { connectionOf } from '../../lib/http/connection.js';
import { observeClientCertificate } from '../metrics/authn.js';

/** Made under `bundle`, and good only while it is the bundle in force. */
type Decision = { readonly bundle: CaBundle } & ({ result: AuthnResult | null; until: number; leafNotAfter: number } | { error: string });

function asList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

export interface X509Options {
  /** The --client-ca-file bundle in force. */
  cas: CurrentCaBundle;
  clock?: () => number;
}

export class X509Authenticator implements Authenticator {
  readonly name = 'x509';
  private readonly cas: CurrentCaBundle;
  private readonly clock: () => number;
  /** By connection (lib/http/connection.ts): a keep-alive client or an HTTP/2 session is verified once. */
  private readonly perConnection = new WeakMap<object, Decision>();

  constructor(opts: X509Options) {
    this.cas = opts.cas;
    this.clock = opts.clock ?? Date.now;
  }

  authenticate(req: IncomingMessage): AuthnResult | null {
    const socket = req.socket as TLSSocket;
    if (typeof socket.getPeerCertificate !== 'function') return null;
    const now = this.clock();
    const bundle = this.cas.current;
    const conn = connectionOf(req);
    const cached = this.perConnection.get(conn);
    let decision = cached;
    if (decision === undefined || decision.bundle !== bundle || (!('error' in decision) && decision.until < now)) {
      decision = this.decide(socket, bundle, now);
      this.perConnection.set(conn, decision);
    }
    if ('error' in decision) throw new AuthnError(this.name, decision.error);
    // kube observes the leaf's remaining lifetime on every request it authenticates.
    if (decision.result) observeClientCertificate((decision.leafNotAfter - now) / 1000);
    return decision.result;
  }

  private decide(socket: TLSSocket, bundle: CaBundle, now: number): Decision {
    const peer = peerLeaf(socket);
    if (!peer) return { bundle, result: null, until: Number.MAX_SAFE_INTEGER, leafNotAfter: 0 };
    let until: number;
    try {
      // The chain the client sent is read only when the leaf is not issued by a client CA directly.
      until = verifyClientChain([peer.cert], bundle.anchors, now, () => peerIntermediates(socket));
    } catch (err) {
      // A presented but unverifiable certificate is a failed credential, not an absent one.
      if (err instanceof CertChainError) return { bundle, error: `client certificate rejected: ${err.message}` };
      throw err;
    }
    const cn = asList(peer.leaf.subject?.CN)[0];
    if (!cn) return { bundle, error: 'client certificate has no common name' };
    const result: AuthnResult = Object.freeze({
      user: Object.freeze({ username: cn, groups: Object.freeze([...asList(peer.leaf.subject?.O)]) as string[] }),
      expiresAt: until,
      method: this.name,
    });
    return { bundle, result, until, leafNotAfter: Date.parse(peer.cert.validTo) };
  }
}
