// --max-connections-per-client-address: how many connections one remote
// address may hold open at once. kube-apiserver has no such limit (Go's
// server has none); the header timeout bounds how long a slow socket lasts,
// not how many one client opens, and every open TLS socket costs memory and a
// file descriptor. Counted on the raw TCP socket, before the TLS handshake, so
// a refused connection costs no handshake: it is closed at once (TLS leaves no
// way to send an HTTP answer before the handshake). IPv4-mapped IPv6
// addresses count as their IPv4 address. Each address's first refusal while
// it is at the cap is logged, not every one.
import type { Server, Socket } from 'node:net';

interface Held {
  open: number;
  logged: boolean;
}

export class ConnectionsPerAddress {
  readonly #held = new Map<string, Held>();

  constructor(
    private readonly max: number,
    private readonly log: (msg: string) => void,
  ) {}

  /** Counts the server's connections from now on; a cap of 0 counts nothing. */
  attach(server: Server): void {
    if (this.max <= 0) return;
    server.on('connection', (socket: Socket) => this.#admit(socket));
  }

  /** Open connections from `address` (a test's and the log's view). */
  openFrom(address: string): number {
    return this.#held.get(addressKey(address))?.open ?? 0;
  }

  #admit(socket: Socket): void {
    const key = addressKey(socket.remoteAddress ?? '');
    let h = this.#held.get(key);
    if (!h) {
      h = { open: 0, logged: false };
      this.#held.set(key, h);
    }
    if (h.open >= this.max) {
      if (!h.logged) {
        h.logged = true;
        this.log(
          `connection from ${key} refused: it holds ${h.open} open connections (--max-connections-per-client-address=${this.max}); further refusals are not logged until it drops below`,
        );
      }
      socket.destroy();
      return;
    }
    h.open++;
    socket.once('close', () => {
      h.open--;
      if (h.open < this.max) h.logged = false;
      if (h.open === 0) this.#held.delete(key);
    });
  }
}

function addressKey(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
