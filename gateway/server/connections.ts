// The open connections of one server that speaks HTTP/1.1 and HTTP/2 on one
// port, for shutdown: Node's HTTP/2 server closes idle HTTP/1.1 connections
// itself but has no "close all", and knows nothing idle about its HTTP/2
// sessions. Idle here: an HTTP/2 session is asked to go away (GOAWAY: open
// streams finish, no new ones start); an HTTP/1.1 connection with no request
// in flight is closed. All: every socket is cut.
import type { Http2SecureServer, Http2Session } from 'node:http2';
import type { TLSSocket } from 'node:tls';

export class Connections {
  readonly #sockets = new Set<TLSSocket>();
  readonly #sessions = new Set<Http2Session>();

  constructor(private readonly server: Http2SecureServer) {
    server.on('secureConnection', (s: TLSSocket) => {
      this.#sockets.add(s);
      s.once('close', () => this.#sockets.delete(s));
    });
    server.on('session', (session: Http2Session) => {
      this.#sessions.add(session);
      session.once('close', () => this.#sessions.delete(session));
    });
  }

  /** How many connections are open (both protocols). */
  get size(): number {
    return this.#sockets.size;
  }

  closeIdle(): void {
    // Present at run time for the HTTP/1.1 side (allowHTTP1), missing from the types.
    (this.server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
    for (const s of this.#sessions) if (!s.closed) s.close();
  }

  closeAll(): void {
    for (const s of this.#sessions) s.destroy();
    for (const s of this.#sockets) s.destroy();
  }
}
