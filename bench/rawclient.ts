// A small closed-loop HTTP/1.1 load generator over TLS: N keep-alive
// connections, each sending its next request as soon as the previous response
// is complete. It writes pre-encoded requests on tls sockets and parses only
// the status line and Content-Length, because node:https's client costs more
// CPU per request than the servers under test and would be what we measured.
import { connect, type TLSSocket } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { Samples, type Percentiles } from './stats.js';

export interface Target {
  port: number;
  ca: string;
  cert: string;
  key: string;
}

export interface Request {
  method: string;
  path: string;
  body?: string;
  /** Default application/json. */ accept?: string;
  /** More header lines, name and value (forward auth's forwarded headers). */
  headers?: Readonly<Record<string, string>>;
}

/** A connection's request source; `done` learns each response (body only when asked for). */
export interface Script {
  next(conn: number): Request;
  done?(conn: number, status: number, body: Buffer | undefined, sentAt: number, doneAt: number): number | void;
  wantBody?: boolean;
}

export interface LoopOptions {
  target: Target;
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** Hard cap on requests sent, whatever the time. */
  maxRequests: number;
}

export interface LoopResult {
  requests: number;
  /** Sum of what `done` returned over the measured window (e.g. objects). */
  units: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  latency: Percentiles;
  /** The measured window, in performance.now() time of this process. */
  from: number;
  until: number;
  /** Filled in by the orchestrator: CPU used / wall time, per process. */
  cpu?: CpuShare;
}

export interface CpuShare {
  server: number;
  load: number;
  redis?: number;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const encoded = new WeakMap<Request, Buffer>();

export function encodeRequest(port: number, r: Request): Buffer {
  const body = r.body === undefined ? undefined : Buffer.from(r.body);
  let head = `${r.method} ${r.path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: ${r.accept ?? 'application/json'}\r\nUser-Agent: gatehouse-bench\r\n`;
  if (body) head += `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`;
  for (const [k, v] of Object.entries(r.headers ?? {})) head += `${k}: ${v}\r\n`;
  head += '\r\n';
  return body ? Buffer.concat([Buffer.from(head), body]) : Buffer.from(head);
}

export function openTls(t: Target): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: t.port, ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost' });
    s.once('secureConnect', () => {
      s.off('error', reject);
      s.setNoDelay(true);
      resolve(s);
    });
    s.once('error', reject);
  });
}

class Conn {
  private chunks: Buffer[] = [];
  private have = 0;
  private headEnd = -1;
  private need = 0;
  private status = 0;
  sentAt = 0;

  constructor(
    readonly socket: TLSSocket,
    private readonly complete: (status: number, body: Buffer | undefined) => void,
    private readonly wantBody: boolean,
  ) {
    socket.on('data', (c: Buffer) => this.onData(c));
  }

  private onData(c: Buffer): void {
    this.chunks.push(c);
    this.have += c.length;
    for (;;) {
      if (this.headEnd < 0) {
        const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
        this.chunks = [buf];
        const i = buf.indexOf(CRLFCRLF);
        if (i < 0) return;
        const head = buf.toString('latin1', 0, i);
        this.status = Number(head.slice(9, 12));
        const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (!m) throw new Error(`response without Content-Length: ${head.split('\r\n')[0]}`);
        this.headEnd = i + 4;
        this.need = this.headEnd + Number(m[1]);
      }
      if (this.have < this.need) return;
      const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      const body = this.wantBody ? buf.subarray(this.headEnd, this.need) : undefined;
      const rest = buf.subarray(this.need);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.have = rest.length;
      this.headEnd = -1;
      this.complete(this.status, body);
      if (this.have === 0) return;
    }
  }
}

/** Runs the closed loop: warm-up, then a measured window; waits for stragglers, closes the sockets. */
export async function closedLoop(opts: LoopOptions, script: Script): Promise<LoopResult> {
  const sockets = await Promise.all(Array.from({ length: opts.connections }, () => openTls(opts.target)));
  const latency = new Samples();
  const statuses: Record<string, number> = {};
  let sent = 0,
    requests = 0,
    units = 0,
    errors = 0,
    inflight = 0;
  const t0 = performance.now();
  const from = t0 + opts.warmupMs;
  const until = from + opts.durationMs;
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));

  const conns = sockets.map((socket, i) => {
    const conn: Conn = new Conn(
      socket,
      (status, body) => {
        const now = performance.now();
        inflight--;
        const u = script.done?.(i, status, body, conn.sentAt, now);
        if (now >= from && now <= until) {
          requests++;
          latency.add(now - conn.sentAt);
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status >= 400) errors++;
          else if (typeof u === 'number') units += u;
        }
        send(i);
      },
      script.wantBody === true,
    );
    socket.on('error', () => {
      errors++;
    });
    return conn;
  });

  function send(i: number): void {
    const now = performance.now();
    if (now > until || sent >= opts.maxRequests) {
      if (inflight === 0) finished();
      return;
    }
    sent++;
    inflight++;
    const conn = conns[i]!;
    conn.sentAt = now;
    const r = script.next(i);
    let bytes = encoded.get(r);
    if (!bytes) encoded.set(r, (bytes = encodeRequest(opts.target.port, r)));
    conn.socket.write(bytes);
  }

  for (let i = 0; i < conns.length; i++) send(i);
  // The fallback timer is cleared: a long window (a fill capped by maxRequests) must not keep the process alive.
  let fallback: NodeJS.Timeout | undefined;
  await Promise.race([allDone, new Promise((r) => (fallback = setTimeout(r, opts.warmupMs + opts.durationMs + 5000)))]);
  clearTimeout(fallback);
  const end = Math.min(performance.now(), until);
  for (const s of sockets) s.destroy();
  return { requests, units, errors, statuses, seconds: Math.max(0.001, (end - from) / 1000), latency: latency.summary(), from, until };
}
