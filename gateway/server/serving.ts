// How every Gatehouse front door serves HTTPS — the gateway, the sidecar and
// the backend processes: the serving certificate and client CAs read and
// checked once, and one server with one set of limits. The request handler is
// always a pipeline chain (gateway/pipeline/chain.ts); upgrade requests run
// through that same chain with a response bound to their socket.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ServerResponse, type IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ensureDevPki, type DevPkiPaths } from '../../certs/devpki.js';
import type { ChainHandler } from '../pipeline/chain.js';

export interface ServingCert {
  readonly cert: string;
  readonly key: string;
}

/** Reads the certificate, then the key (a start with both wrong names the certificate), and checks both. */
export async function loadServingCert(certFile: string, keyFile: string): Promise<ServingCert> {
  const cert = await readFile(certFile, 'utf8');
  const key = await readFile(keyFile, 'utf8');
  // Checked here so a bad file is named, rather than an OpenSSL code surfacing from createServer.
  try { new X509Certificate(cert); } catch { throw new Error(`--tls-cert-file "${certFile}": no PEM certificate found`); }
  try { createPrivateKey(key); } catch { throw new Error(`--tls-private-key-file "${keyFile}": no PEM private key found`); }
  return { cert, key };
}

export interface ServingFlags {
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  readonly dataDir: string;
  readonly bindAddress: string;
  readonly securePort: number;
}

/** --tls-cert-file/--tls-private-key-file, else the dev PKI's serving certificate (made on first start). */
export async function loadServingCertOrDevPki(o: ServingFlags): Promise<ServingCert & { readonly devPki?: DevPkiPaths }> {
  if (o.tlsCertFile && o.tlsPrivateKeyFile) return loadServingCert(o.tlsCertFile, o.tlsPrivateKeyFile);
  const devPki = await ensureDevPki(o.dataDir, { host: connectHost(o.bindAddress), port: o.securePort });
  return { ...await loadServingCert(devPki.servingCert, devPki.servingKey), devPki };
}

/** PEM bundles (client CAs), in the order given. */
export function readPemFiles(files: readonly string[]): Promise<string[]> {
  return Promise.all(files.map((f) => readFile(f, 'utf8')));
}

export interface GatewayTls {
  readonly serving: ServingCert;
  /** --client-ca-file bundles; in dev mode without them, the dev CA. */
  readonly clientCas: readonly string[];
  /** --requestheader-client-ca-file: the authenticating proxy's CA (empty: no proxy is trusted). */
  readonly requestheaderCas: readonly string[];
  /** The CA of cluster-info and legacy token secrets: the dev CA, else the first client CA bundle, else the serving chain. */
  readonly clusterCaPem: string;
  /** The dev PKI's admin kubeconfig, when the dev PKI serves. */
  readonly kubeconfig?: string;
}

/** Everything `gatehouse serve` presents and trusts, read once before anything starts. */
export async function loadGatewayTls(o: ServingFlags & { clientCaFiles: readonly string[]; requestheaderClientCaFile: string | undefined }): Promise<GatewayTls> {
  const { devPki, ...serving } = await loadServingCertOrDevPki(o);
  const clientCas = await readPemFiles(o.clientCaFiles.length === 0 && devPki ? [devPki.caCert] : o.clientCaFiles);
  const requestheaderCas = o.requestheaderClientCaFile ? await readPemFiles([o.requestheaderClientCaFile]) : [];
  const clusterCaPem = devPki ? await readFile(devPki.caCert, 'utf8') : clientCas[0] ?? serving.cert;
  return { serving, clientCas, requestheaderCas, clusterCaPem, ...(devPki ? { kubeconfig: devPki.kubeconfig } : {}) };
}

/** The address clients use: loopback for a wildcard bind. */
export function connectHost(bindAddress: string): string {
  return bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress;
}

export function httpsUrl(host: string, port: number): string {
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export interface ServeHttpsOptions {
  readonly cert: ServingCert;
  /** Every CA a client certificate may chain to; each authenticator verifies against its own bundle. */
  readonly clientCas: readonly string[];
  readonly handler: ChainHandler;
  /** Run upgrade requests (exec, websockets) through the handler; without it Node's default applies. */
  readonly upgrades: boolean;
  readonly port: number;
  readonly bindAddress: string;
}

export interface Serving {
  readonly server: Server;
  readonly url: string;
}

/** Creates the HTTPS server and resolves once it listens. */
export async function serveHttps(o: ServeHttpsOptions): Promise<Serving> {
  const server = createServer({
    cert: o.cert.cert, key: o.cert.key,
    ...(o.clientCas.length > 0 ? { ca: [...o.clientCas] } : {}),
    requestCert: o.clientCas.length > 0,
    // Client certificates are verified by the authenticators, each against its own bundle.
    rejectUnauthorized: false,
    keepAliveTimeout: 65_000,
    // Go's net/http limit (1 MiB + 4 KiB), as kube-apiserver: a huge bearer token gets a 401, not a 431.
    maxHeaderSize: (1 << 20) + 4096,
    minVersion: 'TLSv1.2',
  }, o.handler);
  // kube-apiserver's header timeout and no whole-request timeout: watches and long requests run for minutes.
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;
  // A failed handshake is the client's to see, not a server error.
  server.on('tlsClientError', () => undefined);
  if (o.upgrades) server.on('upgrade', (req, socket: Socket, head: Buffer) => serveUpgrade(o.handler, req, socket, head));
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.bindAddress, () => { server.off('error', reject); resolve(); });
  });
  return { server, url: httpsUrl(connectHost(o.bindAddress), (server.address() as AddressInfo).port) };
}

// Past maxHeaderSize is 431, as Node's default handler and Go's net/http answer; anything else unparsable is 400.
const HEADER_TOO_LARGE = 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) { socket.destroy(); return; }
  socket.end(err.code === 'HPE_HEADER_OVERFLOW' ? HEADER_TOO_LARGE : BAD_REQUEST);
}

/** Any answer but a forwarded upgrade (written by dispatch, after authorization) closes the socket once written. */
function serveUpgrade(handler: ChainHandler, req: IncomingMessage, socket: Socket, head: Buffer): void {
  const res = new ServerResponse(req);
  res.assignSocket(socket);
  res.shouldKeepAlive = false;
  res.once('finish', () => socket.end());
  socket.on('error', () => socket.destroy());
  handler(req, res, { socket, head });
}
