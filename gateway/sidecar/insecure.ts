// kube-rbac-proxy's --insecure-listen-address, on loopback only: the same
// handler (chain and forward auth) over plain HTTP/1.1 for a client in the
// same pod. No client certificates exist here, so callers authenticate with
// tokens; upgrades are not served. Closed with the sidecar.
import { createServer, type Server } from 'node:http';
import type { ChainHandler } from '../pipeline/chain.js';

export async function serveInsecure(host: string, port: number, handler: ChainHandler): Promise<Server> {
  const server = createServer((req, res) => handler(req, res));
  // Go's header limit and kube's header timeout, as the HTTPS side.
  Object.assign(server, { maxHeaderSize: (1 << 20) + 4096, keepAliveTimeout: 65_000, headersTimeout: 60_000, requestTimeout: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
