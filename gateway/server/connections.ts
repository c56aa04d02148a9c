// The open connections of one server that speaks HTTP/1.1 and HTTP/2 on one
// port, for shutdown. Idle here: an HTTP/2 session is asked to go away
// (GOAWAY: open streams finish, no new ones start); an HTTP/1.1 connection
// with no request waiting for its answer is ended once its last answer is
// written, never cut. Node's own closeIdleConnections (which its server's
// close() calls) is not used: it destroys a connection whose answer is ended
// but not yet flushed, so a pipelined request's answer could be lost.
// All: every socket is cut.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2SecureServer, Http2Session } from 'node:http2';
import { Server as NetServer } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';

/** Per HTTP/1.1 connection: how many of its requests still wait for (or are writing) their answer. */
interface Connection {
  pending: number;
  /** Handed on by an upgrade (exec, websockets): never idle; cut only by closeAll, as Go's Shutdown leaves hijacked connections. */
  upgraded: boolean;
}

/** Go's http.Server.Shutdown treats a new connection as idle only after 5 s. */
const NEW_CONNECTION_GRACE_MS = 5000;

export class Connections {
  readonly #sockets = new Map<TLSSocket, Connection>();
  readonly #sessions = new Set<Http2Session>();
  /** Set once idle connections are to be closed: each HTTP/1.1 connection is ended as it becomes idle. */
  #closing = false;

  /**
   * `handler`: the server's request handler, run before a request is tracked, from the one 'request' listener this
   * adds (two listeners made Node's emit copy its listener array for every request).
   */
  constructor(
    private readonly server: Http2SecureServer,
    handler?: (req: IncomingMessage, res: ServerResponse) => void,
  ) {
    // The close handlers are made once per server, `this` the socket or response that closed: no
    // closure or once() wrapper per connection and per request (~430 B an open watch held).
    const self = this;
    const socketClosed = function (this: TLSSocket): void {
      self.#sockets.delete(this);
    };
    // 'close' follows 'finish' (the answer flushed) or an abort, once.
    const responseClosed = function (this: ServerResponse): void {
      self.#answered(this);
    };
    server.on('secureConnection', (s: TLSSocket) => {
      const c: Connection = { pending: 0, upgraded: false };
      this.#sockets.set(s, c);
      s.on('close', socketClosed);
      // Connected while closing (its handshake was under way): its first request has a moment to come, as Go gives a new connection.
      if (this.#closing && !this.#isHttp2(s)) setTimeout(() => this.#endIfIdle(s, c), NEW_CONNECTION_GRACE_MS).unref();
    });
    server.on('session', (session: Http2Session) => {
      this.#sessions.add(session);
      session.once('close', () => this.#sessions.delete(session));
      if (this.#closing) session.close();
    });
    const track = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.httpVersionMajor !== 1) return;
      const socket = req.socket as TLSSocket;
      const c = this.#sockets.get(socket);
      if (!c) return;
      c.pending++;
      res.on('close', responseClosed);
    };
    server.on(
      'request',
      handler
        ? (req: IncomingMessage, res: ServerResponse) => {
            handler(req, res);
            track(req, res);
          }
        : track,
    );
  }

  /** How many connections are open (both protocols). */
  get size(): number {
    return this.#sockets.size;
  }

  /** The server's upgrade handler took this connection over. */
  upgraded(socket: Duplex): void {
    const c = this.#sockets.get(socket as TLSSocket);
    if (c) c.upgraded = true;
  }

  /** Stops accepting connections without closing idle ones (Http2SecureServer.close would, see above); `done` once all are gone. */
  stopListening(done: () => void): void {
    NetServer.prototype.close.call(this.server, () => done());
  }

  closeIdle(): void {
    this.#closing = true;
    for (const [s, c] of this.#sockets) if (!this.#isHttp2(s)) this.#endIfIdle(s, c);
    for (const s of this.#sessions) if (!s.closed) s.close();
  }

  closeAll(): void {
    for (const s of this.#sessions) s.destroy();
    for (const s of this.#sockets.keys()) s.destroy();
  }

  #answered(res: ServerResponse): void {
    // The request keeps its socket after the response let go of it; a socket already closed is gone from the map.
    const socket = res.req.socket as TLSSocket;
    const c = this.#sockets.get(socket);
    if (!c) return;
    c.pending--;
    if (this.#closing) this.#endIfIdle(socket, c);
  }

  #endIfIdle(s: TLSSocket, c: Connection): void {
    if (c.pending === 0 && !c.upgraded) s.end();
  }

  #isHttp2(s: TLSSocket): boolean {
    return s.alpnProtocol === 'h2';
  }
}
