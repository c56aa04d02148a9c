// A tiny admin client for fixtures (not measured), shared by the bench sections.
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Answer {
  status: number;
  text: string;
  headers: IncomingHttpHeaders;
}

/** An unlabelled metric's value in /metrics text (NaN when absent). */
export function metricValue(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

export class Admin {
  private readonly agent: Agent;
  constructor(
    private readonly port: number,
    tls: { ca: string; cert: string; key: string },
    maxSockets = 32,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets, ca: tls.ca, cert: tls.cert, key: tls.key });
  }

  /** A JSON body (or none). */
  call(method: string, path: string, body?: unknown): Promise<Answer> {
    return body === undefined ? this.send(method, path) : this.send(method, path, JSON.stringify(body), 'application/json');
  }

  /** A body as it is, of the given content type. */
  send(method: string, path: string, payload?: string, contentType?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: this.port,
          path,
          method,
          agent: this.agent,
          servername: 'localhost',
          headers: contentType ? { 'content-type': contentType } : {},
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** The size of a GET's body as it travels (no gzip asked), for the given Accept. */
  bodyBytes(path: string, accept: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: this.port, path, agent: this.agent, servername: 'localhost', headers: { accept } }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** A GET with the given headers; the body's size as it travels (gzip stays gzip). */
  getBytes(path: string, headers: Record<string, string>): Promise<{ status: number; bytes: number }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: this.port, path, agent: this.agent, servername: 'localhost', headers }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: n }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  async must(method: string, path: string, body?: unknown): Promise<string> {
    const r = await this.call(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    return r.text;
  }

  /** Waits (up to 20 s) for /readyz: post-start hooks such as the RBAC defaults take a moment. */
  async ready(): Promise<void> {
    for (let i = 0; i < 400; i++) {
      const r = await this.call('GET', '/readyz').catch(() => undefined);
      if (r?.status === 200) return;
      await sleep(50);
    }
    throw new Error(`server on port ${this.port} never became ready`);
  }

  close(): void {
    this.agent.destroy();
  }
}
