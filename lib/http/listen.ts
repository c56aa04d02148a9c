// Starts a serving HTTPS server the way every Gatehouse front door does:
// kube-apiserver's header timeout and no whole-request timeout (watches and
// long requests run for minutes), failed TLS handshakes ignored (the client
// sees them; they are not server errors), a request the parser refuses
// answered with a bare status line, and resolving once it listens.
import type { Server } from 'node:https';
import type { Duplex } from 'node:stream';

// Past maxHeaderSize is 431, as Node's default handler and Go's net/http answer; anything else unparsable is 400.
const HEADER_TOO_LARGE = 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) { socket.destroy(); return; }
  socket.end(err.code === 'HPE_HEADER_OVERFLOW' ? HEADER_TOO_LARGE : BAD_REQUEST);
}

export async function listenServing(server: Server, port: number, host: string): Promise<void> {
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;
  server.on('tlsClientError', () => undefined);
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
}
