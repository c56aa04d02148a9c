// kube-rbac-proxy's --proxy-endpoints-port: the sidecar's own /healthz on a
// port of its own (HTTPS, the serving certificate, no authentication), so
// that the main port passes every path, /healthz included, to the upstream.
// Fails once shutdown begins, as /readyz does on the gateway.
import { createServer, type Server } from 'node:https';
import type { ShutdownCheck } from '../health/checks.js';
import type { FileBacked, ServingCert } from '../server/serving.js';

export async function serveProxyEndpoints(port: number, host: string, cert: FileBacked<ServingCert>, shutdown: ShutdownCheck): Promise<Server> {
  const server = createServer({ cert: cert.current.cert, key: cert.current.key, minVersion: 'TLSv1.2' }, (req, res) => {
    req.resume();
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/healthz') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    let ok = true;
    try {
      shutdown.check();
    } catch {
      ok = false;
    }
    res.writeHead(ok ? 200 : 500, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }).end(ok ? 'ok' : 'shutting down');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
