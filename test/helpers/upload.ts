// A large upload with Node's HTTPS client, declared (Content-Length) or
// chunked in 64 KiB pieces, and what the client saw: the answer, or the error
// that replaced it (a reset while still sending loses the answer). For the
// tests that a 413 reaches a client still sending megabytes.
import { request } from 'node:https';

export interface UploadTarget {
  port: number;
  path: string;
  tls: { ca: Buffer; cert: Buffer; key: Buffer };
}
export interface UploadResult {
  status?: number;
  body?: string;
  headers?: Record<string, unknown>;
  error?: string;
}

export function upload(t: UploadTarget, total: number, chunked: boolean): Promise<UploadResult> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: t.port,
        path: t.path,
        method: 'POST',
        ...t.tls,
        agent: false,
        headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': total }) },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ status: res.statusCode ?? 0, body, error: err.code ?? err.message }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    if (!chunked) {
      req.end(Buffer.alloc(total, 'a'));
      return;
    }
    const piece = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = (): void => {
      while (sent < total && !req.destroyed) {
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!req.destroyed) req.end();
    };
    pump();
  });
}
