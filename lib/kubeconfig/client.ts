// One outbound HTTP(S) client per ClientConfig, built once: the TLS agent
// (CA, client certificate, server name) is made at construction, and again
// only when an exec plugin hands out a different client certificate (which
// forces a new handshake). Every request is bounded by a timeout and a
// response size limit, and carries the user's bearer token (static, from a
// token file, or from an exec plugin). A 401 drops a cached exec credential
// and the request is tried once more with a fresh one.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { ClientConfig } from './load.js';
import { ExecCredentialProvider, type ExecCredential } from './exec.js';
import { clientStatus, outboundCall, type Trace } from '../tracing/span.js';

export interface ClientOptions {
  /** Per request, connection to last byte. */
  timeoutMs?: number;
  maxResponseBytes?: number;
  clock?: () => number;
  log?: (msg: string) => void;
  /** Timeout of one exec plugin run. */
  execTimeoutMs?: number;
  /** What the calls are for (`token webhook`, `authorization webhook`, `audit webhook`), named on their trace spans. */
  purpose?: string;
}

export interface ClientReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export class ClientRequestError extends Error {
  constructor(
    message: string,
    readonly code: 'timeout' | 'network' | 'too-large' | 'credentials',
  ) {
    super(message);
  }
}

const TOKEN_FILE_REFRESH_MS = 60_000;

export class KubeClient {
  readonly exec: ExecCredentialProvider | undefined;
  private agent: HttpsAgent | HttpAgent;
  private agentCert: string | undefined;
  private readonly https: boolean;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly clock: () => number;
  private tokenFromFile: { token: string; readAt: number } | undefined;
  private closed = false;

  constructor(
    readonly config: ClientConfig,
    private readonly opts: ClientOptions = {},
  ) {
    this.https = new URL(config.cluster.server).protocol === 'https:';
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxBytes = opts.maxResponseBytes ?? 16 * 1024 * 1024;
    this.clock = opts.clock ?? Date.now;
    this.exec = config.user.exec
      ? new ExecCredentialProvider(config.user.exec, config.cluster, {
          ...(opts.clock ? { clock: opts.clock } : {}),
          ...(opts.log ? { log: opts.log } : {}),
          ...(opts.execTimeoutMs !== undefined ? { timeoutMs: opts.execTimeoutMs } : {}),
        })
      : undefined;
    this.agent = this.newAgent(config.user.clientCertPem, config.user.clientKeyPem);
    this.agentCert = config.user.clientCertPem;
  }

  private newAgent(cert: string | undefined, key: string | undefined): HttpsAgent | HttpAgent {
    if (!this.https) return new HttpAgent({ keepAlive: true });
    const cl = this.config.cluster;
    const tlsOptions = { ...(cl.caPem ? { ca: cl.caPem } : {}), ...(cert && key ? { cert, key } : {}), minVersion: 'TLSv1.2' as const };
    return new HttpsAgent({
      keepAlive: true,
      ...tlsOptions,
      // Made once: without it every new connection parses the CA bundle and the key into a context of its own
      // (createSecureContext was a tenth of a sidecar's CPU while 50 review calls opened connections at once).
      secureContext: createSecureContext(tlsOptions),
      rejectUnauthorized: !cl.insecureSkipTlsVerify,
      ...(cl.tlsServerName ? { servername: cl.tlsServerName } : {}),
    });
  }

  /** Swaps the agent when an exec plugin returns a different client certificate: old connections are closed. */
  private agentFor(cred: ExecCredential | undefined): HttpsAgent | HttpAgent {
    if (!cred?.clientCertPem || cred.clientCertPem === this.agentCert) return this.agent;
    const old = this.agent;
    this.agent = this.newAgent(cred.clientCertPem, cred.clientKeyPem);
    this.agentCert = cred.clientCertPem;
    const keyId = createHash('sha256').update(cred.clientCertPem).digest('hex').slice(0, 12);
    this.opts.log?.(`outbound client for ${this.config.cluster.server}: new client certificate ${keyId} from exec plugin, reconnecting`);
    // Idle connections go now; ones still in use finish their request, then are dropped with the agent.
    for (const list of Object.values(old.freeSockets)) for (const s of list ?? []) s.destroy();
    setTimeout(() => old.destroy(), this.timeoutMs).unref();
    return this.agent;
  }

  private bearer(cred: ExecCredential | undefined): string | undefined {
    const u = this.config.user;
    if (u.token !== undefined) return u.token;
    if (u.tokenFile !== undefined) {
      const now = this.clock();
      if (!this.tokenFromFile || now - this.tokenFromFile.readAt > TOKEN_FILE_REFRESH_MS) {
        try {
          this.tokenFromFile = { token: readFileSync(u.tokenFile, 'utf8').trim(), readAt: now };
        } catch (err) {
          if (!this.tokenFromFile)
            throw new ClientRequestError(`token file "${u.tokenFile}" cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, 'credentials');
        }
      }
      return this.tokenFromFile!.token;
    }
    return cred?.token;
  }

  /**
   * Sends one request to `server` + `path` (path '' = the server URL itself, as
   * webhooks use); under a recorded request's `trace`, in a client span whose
   * traceparent it sends.
   */
  request(method: string, path: string, body?: Buffer | string, headers: OutgoingHttpHeaders = {}, trace?: Trace): Promise<ClientReply> {
    if (!trace) return this.send(method, path, body, headers);
    const url = this.url(path);
    return outboundCall(
      trace,
      method,
      url.origin + url.pathname,
      { 'server.address': url.hostname, ...(this.opts.purpose ? { 'gatehouse.client': this.opts.purpose } : {}) },
      async (trace, span) => {
        const reply = await this.send(method, path, body, { ...headers, ...trace });
        clientStatus(span, reply.status);
        return reply;
      },
    );
  }

  private async send(method: string, path: string, body: Buffer | string | undefined, headers: OutgoingHttpHeaders): Promise<ClientReply> {
    if (this.closed) throw new ClientRequestError('client is closed', 'network');
    let cred: ExecCredential | undefined;
    if (this.exec) {
      try {
        cred = await this.exec.get();
      } catch (err) {
        throw new ClientRequestError(err instanceof Error ? err.message : String(err), 'credentials');
      }
    }
    const reply = await this.once(method, path, body, headers, cred);
    if (reply.status !== 401 || !this.exec || !cred) return reply;
    this.exec.invalidate(cred);
    let fresh: ExecCredential;
    try {
      fresh = await this.exec.get();
    } catch (err) {
      throw new ClientRequestError(err instanceof Error ? err.message : String(err), 'credentials');
    }
    return this.once(method, path, body, headers, fresh);
  }

  private url(path: string): URL {
    const base = this.config.cluster.server;
    if (path === '') return new URL(base);
    return new URL(base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`));
  }

  private once(
    method: string,
    path: string,
    body: Buffer | string | undefined,
    headers: OutgoingHttpHeaders,
    cred: ExecCredential | undefined,
  ): Promise<ClientReply> {
    const h: OutgoingHttpHeaders = { ...headers };
    const token = this.bearer(cred);
    if (token !== undefined) h['authorization'] = `Bearer ${token}`;
    if (body !== undefined) h['content-length'] = Buffer.byteLength(body);
    const agent = this.agentFor(cred);
    const send = this.https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err: Error | undefined, reply?: ClientReply) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(reply!);
      };
      const req = send(this.url(path), { method, agent, headers: h }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > this.maxBytes) {
            finish(new ClientRequestError(`response from ${this.config.cluster.server} is larger than ${this.maxBytes} bytes`, 'too-large'));
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (err) => finish(new ClientRequestError(`reading the response from ${this.config.cluster.server}: ${err.message}`, 'network')));
        res.on('aborted', () => finish(new ClientRequestError(`the response from ${this.config.cluster.server} was cut off`, 'network')));
      });
      const timer = setTimeout(() => {
        finish(new ClientRequestError(`request to ${this.config.cluster.server} timed out after ${this.timeoutMs}ms`, 'timeout'));
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (err) => finish(new ClientRequestError(`request to ${this.config.cluster.server} failed: ${err.message}`, 'network')));
      req.end(body);
    });
  }

  /** POSTs a JSON object and parses a JSON answer (undefined when the body is not JSON). */
  async postJson(path: string, value: unknown, trace?: Trace): Promise<{ status: number; json: unknown }> {
    const reply = await this.request('POST', path, JSON.stringify(value), { 'content-type': 'application/json', accept: 'application/json' }, trace);
    let json: unknown;
    try {
      json = JSON.parse(reply.body.toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: reply.status, json };
  }

  close(): void {
    this.closed = true;
    this.agent.destroy();
  }
}
