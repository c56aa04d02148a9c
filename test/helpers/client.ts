// A small HTTPS client for tests: real TLS, keep-alive, JSON in and out,
// and line-by-line reading of watch streams.
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';

export interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  /** The answer's bytes (gunzipped), for binary encodings. */
  body: Buffer;
}

export interface TlsMaterial {
  ca: string;
  cert?: string;
  key?: string;
}

export class HttpsClient {
  readonly agent: Agent;
  constructor(
    readonly base: string,
    tls: TlsMaterial,
  ) {
    this.agent = new Agent({ keepAlive: true, ca: tls.ca, ...(tls.cert ? { cert: tls.cert, key: tls.key } : {}) });
  }

  request(method: string, path: string, body?: unknown, headers: OutgoingHttpHeaders = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const h: OutgoingHttpHeaders = { ...headers };
      if (payload !== undefined && h['content-type'] === undefined) h['content-type'] = 'application/json';
      // Node sends a DELETE body without framing unless told its length.
      if (payload !== undefined && h['content-length'] === undefined && h['transfer-encoding'] === undefined) h['content-length'] = Buffer.byteLength(payload);
      const req = httpsRequest(new URL(path, this.base), { method, agent: this.agent, headers: h }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let buf = Buffer.concat(chunks);
          if (res.headers['content-encoding'] === 'gzip') buf = gunzipSync(buf);
          const text = buf.toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, body: buf });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Opens a watch and yields parsed events; call stop() to close. */
  watch(path: string, headers: OutgoingHttpHeaders = {}): Promise<WatchStream> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        new URL(path, this.base),
        {
          method: 'GET',
          agent: false,
          ca: (this.agent.options as { ca?: string }).ca,
          cert: (this.agent.options as { cert?: string }).cert,
          key: (this.agent.options as { key?: string }).key,
          headers,
        },
        (res) => {
          resolve(new WatchStream(req, res));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface WatchEvent {
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  object: any;
}

export class WatchStream {
  private buffer = '';
  private readonly events: WatchEvent[] = [];
  private waiters: Array<() => void> = [];
  ended = false;
  readonly status: number;

  constructor(
    private readonly req: ReturnType<typeof httpsRequest>,
    readonly res: IncomingMessage,
  ) {
    this.status = res.statusCode ?? 0;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (line.trim()) this.events.push(JSON.parse(line) as WatchEvent);
      }
      this.wake();
    });
    res.on('end', () => {
      this.ended = true;
      this.wake();
    });
    res.on('error', () => {
      this.ended = true;
      this.wake();
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** The next event, or undefined if the stream ends or timeoutMs passes. */
  async next(timeoutMs = 5000): Promise<WatchEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length === 0) {
      if (this.ended) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.events.shift();
  }

  /** Collects n events (throws if they do not arrive in time). */
  async take(n: number, timeoutMs = 5000): Promise<WatchEvent[]> {
    const out: WatchEvent[] = [];
    for (let i = 0; i < n; i++) {
      const ev = await this.next(timeoutMs);
      if (!ev) throw new Error(`expected ${n} events, got ${out.length}: ${JSON.stringify(out.map((e) => e.type))}`);
      out.push(ev);
    }
    return out;
  }

  async waitEnd(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.ended;
  }

  stop(): void {
    this.req.destroy();
  }
}
