// Starts a serving HTTPS server the way every Gatehouse front door does:
// kube-apiserver's header timeout and no whole-request timeout (watches and
// long requests run for minutes), failed TLS handshakes ignored (the client
// sees them; they are not server errors), and resolving once it listens.
import type { Server } from 'node:https';

export async function listenServing(server: Server, port: number, host: string): Promise<void> {
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
}
