// Client-certificate authentication. The TLS layer has verified the chain
// against --client-ca-file (OpenSSL checks signatures, validity window and
// the clientAuth purpose); this maps a verified certificate to a user:
// CN = username, each O = a group. Results are kept per TLS connection,
// since a connection's certificate never changes.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Authenticator, AuthnResult } from './types.js';
import { AuthnError } from './types.js';

const perConnection = new WeakMap<TLSSocket, AuthnResult | null>();

function asList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

export class X509Authenticator implements Authenticator {
  readonly name = 'x509';

  authenticate(req: IncomingMessage): AuthnResult | null {
    const socket = req.socket as TLSSocket;
    if (typeof socket.getPeerCertificate !== 'function') return null;
    const cached = perConnection.get(socket);
    if (cached !== undefined) return cached;
    const cert = socket.getPeerCertificate(false);
    if (!cert || Object.keys(cert).length === 0) {
      perConnection.set(socket, null);
      return null;
    }
    if (!socket.authorized) {
      // A presented but unverifiable certificate is a failed credential, not an absent one.
      throw new AuthnError(this.name, `client certificate rejected: ${String(socket.authorizationError ?? 'not signed by a trusted CA')}`);
    }
    const cn = asList(cert.subject?.CN)[0];
    if (!cn) throw new AuthnError(this.name, 'client certificate has no common name');
    const result: AuthnResult = Object.freeze({
      user: Object.freeze({ username: cn, groups: Object.freeze([...asList(cert.subject?.O)]) as string[] }),
    });
    perConnection.set(socket, result);
    return result;
  }
}
