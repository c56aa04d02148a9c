// Outbound HTTPS GETs to an identity provider, with the issuer's CA (or the
// system roots), a timeout and a size cap; shaped as `fetch` so that
// openid-client (customFetch) can use it. One agent per issuer, built once.
import { Agent, request } from 'node:https';

export interface Fetcher {
  (url: string, init?: { headers?: Record<string, string>; signal?: AbortSignal | null }): Promise<Response>;
  close(): void;
}

export interface FetcherOptions {
  /** PEM bundle that replaces the system roots. */
  readonly caPem?: string;
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

export function httpsFetcher(opts: FetcherOptions = {}): Fetcher {
  const agent = new Agent({ keepAlive: true, maxSockets: 4, ...(opts.caPem ? { ca: opts.caPem } : {}) });
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  const get = (url: string, init?: { headers?: Record<string, string>; signal?: AbortSignal | null }): Promise<Response> =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      if (u.protocol !== 'https:') {
        reject(new Error(`refusing to fetch ${JSON.stringify(url)}: only https is allowed`));
        return;
      }
      const req = request(
        u,
        {
          method: 'GET',
          agent,
          headers: { accept: 'application/json', ...init?.headers },
          timeout: timeoutMs,
          ...(init?.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) req.destroy(new Error(`response from ${u.origin} larger than ${maxBytes} bytes`));
            else chunks.push(c);
          });
          res.on('error', reject);
          res.on('end', () => {
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
            resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500, headers }));
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`request to ${u.origin} timed out after ${timeoutMs}ms`)));
      req.on('error', reject);
      req.end();
    });
  return Object.assign(get, { close: () => agent.destroy() });
}
