// The baseline servers' rig (bare.ts, floor.ts, kubefloor.ts): a node:https
// server with Gatehouse's TLS settings — the same certificate, client
// certificates asked for against the same CA, keep-alive as Gatehouse's —
// so a baseline and Gatehouse differ only in what they do per request.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';

export function baselineServer(certFile: string, keyFile: string, caFile: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const server = createServer(
    {
      cert: readFileSync(certFile),
      key: readFileSync(keyFile),
      ca: readFileSync(caFile),
      requestCert: true,
      rejectUnauthorized: false,
      keepAliveTimeout: 65_000,
      minVersion: 'TLSv1.2',
    },
    handler,
  );
  server.on('tlsClientError', () => undefined);
  return server;
}
