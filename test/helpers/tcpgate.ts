// A loopback TCP relay a test can cut: it drops every open connection (as a
// network failure would, mid-stream) and holds new ones unanswered until it is
// opened again. TLS passes through untouched, so clients still verify the
// real server's certificate. Used to make a client's watch lose its
// connection and come back only once the test has changed the world.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

export class TcpGate {
  private readonly live = new Set<Socket>();
  private held: Socket[] = [];
  private passing = true;

  private constructor(
    private readonly server: Server,
    private readonly targetPort: number,
  ) {
    server.on('connection', (client) => {
      client.on('error', () => undefined);
      if (this.passing) this.relay(client);
      else {
        // Whatever the client sends waits in the paused socket until open().
        client.pause();
        this.held.push(client);
      }
    });
  }

  static async start(targetPort: number): Promise<TcpGate> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new TcpGate(server, targetPort);
  }

  get port(): number {
    const addr = this.server.address();
    if (addr === null || typeof addr === 'string') throw new Error('the gate is not listening');
    return addr.port;
  }

  /** Destroys every relayed connection and holds new ones until open(). */
  cut(): void {
    this.passing = false;
    for (const s of this.live) s.destroy();
    this.live.clear();
  }

  /** Relays the held connections and every new one. */
  open(): void {
    this.passing = true;
    for (const client of this.held.splice(0)) this.relay(client);
  }

  async close(): Promise<void> {
    this.cut();
    for (const s of this.held.splice(0)) s.destroy();
    this.server.close();
    await once(this.server, 'close');
  }

  private relay(client: Socket): void {
    const upstream = connect(this.targetPort, '127.0.0.1');
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => {
      upstream.destroy();
      this.live.delete(client);
      this.live.delete(upstream);
    });
    upstream.on('close', () => {
      client.destroy();
      this.live.delete(client);
      this.live.delete(upstream);
    });
    this.live.add(client);
    this.live.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }
}
