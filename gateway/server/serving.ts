// How every Gatehouse front door serves HTTPS — the gateway, the sidecar and
// the backend processes: the serving certificate and client CAs read and
// checked, one server with one set of limits, and the files re-read when
// they change (as kube-apiserver's dynamic certificates): new handshakes get
// the new certificate and CAs, open connections keep theirs, and a bad or
// half-written file keeps the previous material (logged). The request
// handler is always a pipeline chain (gateway/pipeline/chain.ts); upgrade
// requests run through that same chain with a response bound to their socket.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ServerResponse, type IncomingMessage } from 'node:http';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { ConfigError } from '../../lib/config/error.js';
import { Connections } from './connections.js';
import { ConnectionsPerAddress } from './peercap.js';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContextOptions } from 'node:tls';
import { ensureDevPki, type DevPkiPaths } from '../../certs/devpki.js';
import { caBundle, type CaBundle } from '../authn/certchain.js';
import { FileReloader } from '../config/filereload.js';
import type { ChainHandler } from '../pipeline/chain.js';
import { countTlsHandshakeError } from '../metrics/serving.js';

export interface ServingCert {
  readonly cert: string;
  readonly key: string;
}

/**
 * Material built from files, kept current by serveHttps: a reload builds a
 * new value from all the files and replaces `current` whole, so a reader
 * takes one reference per use.
 */
export class FileBacked<T> {
  private value: T;

  private constructor(
    /** For log lines. */
    readonly what: string,
    readonly paths: readonly string[],
    /** The content `current` was built from at start. */
    readonly texts: readonly string[],
    readonly build: (texts: readonly string[]) => T,
  ) {
    this.value = build(texts);
  }

  /** Reads the files in order (so the first bad one is the one named) and builds. */
  static async read<T>(what: string, paths: readonly string[], build: (texts: readonly string[]) => T): Promise<FileBacked<T>> {
    const texts: string[] = [];
    for (const p of paths) texts.push(await readFile(p, 'utf8'));
    return new FileBacked(what, paths, texts, build);
  }

  get current(): T {
    return this.value;
  }

  replace(next: T): void {
    this.value = next;
  }
}

/** Checks a certificate and its key as TLS will use them, naming the file at fault. */
function servingCertOf(cert: string, key: string, certFile: string, keyFile: string): ServingCert {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError('no PEM certificate found', { flag: '--tls-cert-file', file: certFile });
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError('no PEM private key found', { flag: '--tls-private-key-file', file: keyFile });
  }
  // A pair caught halfway through being replaced: the other file is still to come.
  if (!x509.checkPrivateKey(privateKey))
    throw new ConfigError(`the private key does not match the certificate of --tls-cert-file "${certFile}"`, { flag: '--tls-private-key-file', file: keyFile });
  return Object.freeze({ cert, key });
}

/** Reads the certificate, then the key (a start with both wrong names the certificate), and checks both. */
export function loadServingCert(certFile: string, keyFile: string): Promise<FileBacked<ServingCert>> {
  return FileBacked.read('serving certificate', [certFile, keyFile], ([cert, key]) => servingCertOf(cert, key, certFile, keyFile));
}

/** One CA bundle from the files of one flag (none: an empty bundle, never reloaded). */
export function loadCaBundle(flag: string, files: readonly string[]): Promise<FileBacked<CaBundle>> {
  return FileBacked.read(`client CA (${flag})`, files, (texts) => caBundle(texts, flag));
}

export interface ServingFlags {
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  readonly dataDir: string;
  readonly bindAddress: string;
  readonly securePort: number;
}

/** --tls-cert-file/--tls-private-key-file, else the dev PKI's serving certificate (made on first start). */
export async function loadServingCertOrDevPki(o: ServingFlags): Promise<{ readonly serving: FileBacked<ServingCert>; readonly devPki?: DevPkiPaths }> {
  if (o.tlsCertFile && o.tlsPrivateKeyFile) return { serving: await loadServingCert(o.tlsCertFile, o.tlsPrivateKeyFile) };
  const devPki = await ensureDevPki(o.dataDir, { host: connectHost(o.bindAddress), port: o.securePort });
  return { serving: await loadServingCert(devPki.servingCert, devPki.servingKey), devPki };
}

/** PEM bundles (client CAs), in the order given. */
export function readPemFiles(files: readonly string[]): Promise<string[]> {
  return Promise.all(files.map((f) => readFile(f, 'utf8')));
}

export interface GatewayTls {
  readonly serving: FileBacked<ServingCert>;
  /** --client-ca-file bundles; in dev mode without them, the dev CA; else empty. */
  readonly clientCa: FileBacked<CaBundle>;
  /** --requestheader-client-ca-file: the authenticating proxy's CA (none: no proxy is trusted). */
  readonly requestheaderCa: FileBacked<CaBundle> | undefined;
  /** The CA of cluster-info and legacy token secrets, as at start: the dev CA, else the first client CA bundle, else the serving chain. */
  readonly clusterCaPem: string;
  /** The dev PKI's admin kubeconfig, when the dev PKI serves. */
  readonly kubeconfig?: string;
}

/** Everything `gatehouse serve` presents and trusts, read before anything starts. */
export async function loadGatewayTls(
  o: ServingFlags & { clientCaFiles: readonly string[]; requestheaderClientCaFile: string | undefined },
): Promise<GatewayTls> {
  const { serving, devPki } = await loadServingCertOrDevPki(o);
  const clientCa = await loadCaBundle('--client-ca-file', o.clientCaFiles.length === 0 && devPki ? [devPki.caCert] : o.clientCaFiles);
  const requestheaderCa = o.requestheaderClientCaFile ? await loadCaBundle('--requestheader-client-ca-file', [o.requestheaderClientCaFile]) : undefined;
  const clusterCaPem = devPki ? await readFile(devPki.caCert, 'utf8') : (clientCa.current.pems[0] ?? serving.current.cert);
  return { serving, clientCa, requestheaderCa, clusterCaPem, ...(devPki ? { kubeconfig: devPki.kubeconfig } : {}) };
}

/** The address clients use: loopback for a wildcard bind. */
export function connectHost(bindAddress: string): string {
  return bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress;
}

export function httpsUrl(host: string, port: number): string {
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export interface ServeHttpsOptions {
  readonly cert: FileBacked<ServingCert>;
  /** Every CA a client certificate may chain to (their union is requested); each authenticator verifies against its own bundle. */
  readonly clientCas: readonly FileBacked<CaBundle>[];
  readonly handler: ChainHandler;
  /** Run upgrade requests (exec, websockets) through the handler; without it Node's default applies. */
  readonly upgrades: boolean;
  readonly port: number;
  readonly bindAddress: string;
  /** Reload outcomes. */
  readonly log: (msg: string) => void;
  /** The files are re-read this often even without a change event (kube: 60 s); a test knob. */
  readonly reloadIntervalMs?: number;
  /** SETTINGS_MAX_CONCURRENT_STREAMS of each HTTP/2 connection (--http2-max-streams-per-connection). */
  readonly http2MaxStreams?: number;
  /** Most connections one remote address holds open (--max-connections-per-client-address); absent or 0 = no cap. */
  readonly maxConnectionsPerAddress?: number;
  /** --tls-min-version (default TLS 1.2) and --tls-cipher-suites (OpenSSL's list; default Node's). */
  readonly minVersion?: 'TLSv1.2' | 'TLSv1.3';
  readonly ciphers?: string | undefined;
}

export interface Serving {
  readonly server: Http2SecureServer;
  readonly connections: Connections;
  readonly url: string;
}

/** The secure context's options, the same at start and on every reload. */
function secureContextOptions(o: ServeHttpsOptions): SecureContextOptions {
  const cas = o.clientCas.flatMap((c) => c.current.pems);
  return {
    cert: o.cert.current.cert,
    key: o.cert.current.key,
    ...(cas.length > 0 ? { ca: cas } : {}),
    minVersion: o.minVersion ?? 'TLSv1.2',
    ...(o.ciphers ? { ciphers: o.ciphers } : {}),
  };
}

/** Creates the HTTPS server, resolves once it listens, and reloads its certificate and CAs until it closes. */
export async function serveHttps(o: ServeHttpsOptions): Promise<Serving> {
  const context = secureContextOptions(o);
  // HTTP/2 and HTTP/1.1 on one port, chosen by ALPN as kube-apiserver offers them; both
  // protocols' requests take the same chain (Node's compatibility request and response
  // have the HTTP/1.1 shapes the chain uses).
  const handler = o.handler;
  const server = createSecureServer({
    ...context,
    allowHTTP1: true,
    // Fixed for the server's life: a CA file, once given, holds at least one certificate.
    requestCert: context.ca !== undefined,
    // Client certificates are verified by the authenticators, each against its own bundle.
    rejectUnauthorized: false,
    // A LIST answer of many megabytes is buffered per stream: room for several (MB).
    maxSessionMemory: 64,
    // Go's header limit (1 MiB + 4 KiB), as below for HTTP/1.1.
    settings: { maxConcurrentStreams: o.http2MaxStreams ?? 1000, maxHeaderListSize: (1 << 20) + 4096 },
  });
  // The HTTP/1.1 side reads these from the server object (Node's http2 server takes no
  // HTTP/1.1 options): Go's header limit, kube's header timeout, and no whole-request
  // timeout, since watches and long requests run for minutes.
  Object.assign(server, { maxHeaderSize: (1 << 20) + 4096, keepAliveTimeout: 65_000, headersTimeout: 60_000, requestTimeout: 0 });
  // The handler and the connections' bookkeeping of a request: one 'request' listener, the handler first.
  const connections = new Connections(server, (req, res) => handler(req, res));
  new ConnectionsPerAddress(o.maxConnectionsPerAddress ?? 0, o.log).attach(server);
  // A failed handshake is the client's to see, not a server error; it is counted.
  server.on('tlsClientError', countTlsHandshakeError);
  if (o.upgrades)
    server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      connections.upgraded(socket);
      serveUpgrade(handler, req, socket, head);
    });
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.bindAddress, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const reloaders = [reloader(o.cert, server, o), ...o.clientCas.map((c) => reloader(c, server, o))].filter((r) => r !== undefined);
  for (const r of reloaders) r.start();
  server.once('close', () => {
    for (const r of reloaders) r.stop();
  });
  return { server, connections, url: httpsUrl(connectHost(o.bindAddress), (server.address() as AddressInfo).port) };
}

/** Re-reads `source`'s files; a new value is swapped in and the secure context rebuilt, or both stay as they were. */
function reloader<T>(source: FileBacked<T>, server: Http2SecureServer, o: ServeHttpsOptions): FileReloader<T> | undefined {
  if (source.paths.length === 0) return undefined;
  return new FileReloader<T>({
    paths: source.paths,
    initialTexts: source.texts,
    what: source.what,
    build: source.build,
    log: o.log,
    apply: (next) => {
      const previous = source.current;
      source.replace(next);
      try {
        // New handshakes only: open connections keep the context they were made with.
        server.setSecureContext(secureContextOptions(o));
      } catch (err) {
        source.replace(previous);
        throw err;
      }
    },
    ...(o.reloadIntervalMs !== undefined ? { pollIntervalMs: o.reloadIntervalMs } : {}),
  });
}

// Past maxHeaderSize is 431, as Node's default handler and Go's net/http answer; anything else unparsable is 400.
const HEADER_TOO_LARGE = 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
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
