// Real peers for authentication tests: an HTTPS server with its own CA (a
// token webhook, or any endpoint an outbound client talks to), and a tiny
// exec credential plugin written as a node script.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateCa, generateServingCert, type CertKeyPair } from '../../certs/pki.js';

export interface PeerRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
  /** CN of the client certificate, if one was presented. */
  readonly clientCn: string | undefined;
}

export type PeerHandler = (r: PeerRequest, res: ServerResponse) => void;

export interface HttpsPeer {
  readonly url: string;
  readonly ca: CertKeyPair;
  readonly requests: PeerRequest[];
  handler: PeerHandler;
  close(): Promise<void>;
}

/** Starts an HTTPS server on loopback; it asks for (but does not require) client certificates from `clientCa`. */
export async function startHttpsPeer(handler: PeerHandler, opts: { clientCa?: CertKeyPair } = {}): Promise<HttpsPeer> {
  const ca = generateCa('peer-ca');
  const serving = generateServingCert(ca);
  const requests: PeerRequest[] = [];
  const peer: { handler: PeerHandler } = { handler };
  const server: Server = createServer(
    {
      cert: serving.certPem,
      key: serving.keyPem,
      ...(opts.clientCa ? { ca: opts.clientCa.certPem, requestCert: true, rejectUnauthorized: false } : {}),
    },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const sock = req.socket as TLSSocket;
        const cn = sock.authorized ? (sock.getPeerCertificate().subject?.CN as string | undefined) : undefined;
        const r: PeerRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json, clientCn: cn };
        requests.push(r);
        peer.handler(r, res);
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    ca,
    requests,
    get handler() {
      return peer.handler;
    },
    set handler(h: PeerHandler) {
      peer.handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, code: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** A token webhook answer for `review` (the request's TokenReview), in its apiVersion. */
export function tokenReviewAnswer(review: { apiVersion?: string }, status: Record<string, unknown>): unknown {
  return { apiVersion: review.apiVersion, kind: 'TokenReview', status };
}

/**
 * Writes an executable node script that prints an ExecCredential. It reads its
 * answers, one per run, from `<dir>/answers.json` (the last one repeats), counts
 * runs in `<dir>/runs`, and saves KUBERNETES_EXEC_INFO of each run in `<dir>/info-<n>.json`.
 */
export async function writeExecPlugin(dir: string, answers: readonly unknown[]): Promise<string> {
  await writeFile(join(dir, 'answers.json'), JSON.stringify(answers));
  const script = join(dir, 'plugin.mjs');
  await writeFile(
    script,
    `#!${process.execPath}
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
const dir = dirname(fileURLToPath(import.meta.url));
const runsFile = join(dir, 'runs');
const n = existsSync(runsFile) ? Number(readFileSync(runsFile, 'utf8')) + 1 : 1;
writeFileSync(runsFile, String(n));
writeFileSync(join(dir, 'info-' + n + '.json'), process.env.KUBERNETES_EXEC_INFO ?? '');
const answers = JSON.parse(readFileSync(join(dir, 'answers.json'), 'utf8'));
const a = answers[Math.min(n, answers.length) - 1];
process.stdout.write(typeof a === 'string' ? a : JSON.stringify(a));
`,
  );
  await chmod(script, 0o755);
  return script;
}
