// An ObjectSource over HTTPS: get/list/watch against a remote API server
// (the core backend as its own process), for the gateway's caches (RBAC,
// Node graph, service-account and bootstrap-token lookups, aggregation
// informers). List pages through `limit`/`continue` and returns the list's
// resourceVersion; watch starts from it, asks for bookmarks, remembers the
// last resourceVersion seen and reconnects from there when the stream ends
// (backend restart, idle timeout). A 410 Gone (expired resourceVersion) or a
// failed reconnect ends the watch with onError, and the caller lists again
// (informer.ts, rbac sync) — client-go's reflector semantics.
//
// Authentication is whatever the caller passes: here the gateway's
// front-proxy client certificate plus identity headers (request-header
// authentication at the backend).
import { Agent, request } from 'node:https';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { KObject } from '../api/meta.js';
import type { ObjectEvent, ObjectSource, ObjectWatch } from '../api/objectsource.js';
import type { RegistrySource } from '../registry/live.js';

export interface HttpObjectSourceOptions {
  /** https://host:port */
  readonly server: string;
  readonly caPem: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  /** TLS server name (default: the URL's host). */
  readonly servername?: string;
  /** Sent with every request (identity headers). */
  readonly headers?: OutgoingHttpHeaders;
  /** The registry in force (custom resources included). */
  readonly registry: RegistrySource;
  readonly timeoutMs?: number;
  readonly log?: (msg: string) => void;
  /** Reconnect attempts of a watch before it reports an error (default 3). */
  readonly watchRetries?: number;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const PAGE = 500;

export class HttpObjectSource implements ObjectSource {
  readonly agent: Agent;
  readonly #url: URL;
  readonly #timeoutMs: number;
  #closed = false;
  readonly #watches = new Set<{ stop(): void }>();

  constructor(private readonly o: HttpObjectSourceOptions) {
    this.#url = new URL(o.server);
    this.#timeoutMs = o.timeoutMs ?? 30_000;
    this.agent = new Agent({
      keepAlive: true,
      ca: o.caPem,
      minVersion: 'TLSv1.2',
      ...(o.clientCertPem && o.clientKeyPem ? { cert: o.clientCertPem, key: o.clientKeyPem } : {}),
      ...(o.servername ? { servername: o.servername } : {}),
    });
  }

  /** `/api/v1` or `/apis/<group>/<preferred version>`, and whether the type is namespaced. */
  #base(group: string, resource: string): { prefix: string; version: string; namespaced: boolean } {
    const version = group === '' ? 'v1' : (this.o.registry.current.group(group)?.preferredVersion ?? '');
    const t = this.o.registry.current.lookup(group, version, resource);
    if (!t) throw new Error(`no served type ${resource}${group ? `.${group}` : ''}`);
    return { prefix: group === '' ? '/api/v1' : `/apis/${group}/${version}`, version, namespaced: t.namespaced };
  }

  #path(group: string, resource: string, namespace: string | undefined, name?: string): string {
    const b = this.#base(group, resource);
    const ns = b.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${b.prefix}${ns}/${resource}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
  }

  #open(method: string, path: string, body?: unknown, timeoutMs = this.#timeoutMs): Promise<IncomingMessage> {
    if (this.#closed) return Promise.reject(new Error('object source closed'));
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.#url.hostname.replace(/^\[|\]$/g, ''),
          port: this.#url.port || 443,
          path,
          method,
          agent: this.agent,
          headers: {
            accept: 'application/json',
            ...this.o.headers,
            ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
          ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}),
        },
        resolve,
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs}ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** One JSON request; non-2xx statuses become HttpError (404 included). */
  async json(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const res = await this.#open(method, path, body);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const status = res.statusCode ?? 0;
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      /* not JSON */
    }
    if (status < 200 || status >= 300)
      throw new HttpError(status, `${method} ${path}: HTTP ${status}${typeof parsed['message'] === 'string' ? `: ${parsed['message']}` : ''}`);
    return parsed;
  }

  /** The path of an object (for writes by the caller). */
  objectPath(group: string, resource: string, namespace: string, name: string): string {
    return this.#path(group, resource, namespace, name);
  }

  async get(group: string, resource: string, namespace: string, name: string): Promise<KObject | undefined> {
    try {
      return (await this.json('GET', this.#path(group, resource, namespace, name))) as unknown as KObject;
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** No cache here: a live read. */
  lookup(group: string, resource: string, namespace: string, name: string): Promise<KObject | undefined> {
    return this.get(group, resource, namespace, name);
  }

  async list(group: string, resource: string, namespace?: string): Promise<{ items: KObject[]; resourceVersion: string }> {
    const path = this.#path(group, resource, namespace);
    const b = this.#base(group, resource);
    const items: KObject[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const page = await this.json('GET', `${path}?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      const meta = (page['metadata'] ?? {}) as { resourceVersion?: string; continue?: string };
      if (!rv) rv = meta.resourceVersion ?? '';
      cont = meta.continue || undefined;
      const kind = typeof page['kind'] === 'string' ? page['kind'].replace(/List$/, '') : undefined;
      const apiVersion = group === '' ? 'v1' : `${group}/${b.version}`;
      // List items carry no kind; the store's objects do, and consumers may look.
      for (const it of (page['items'] ?? []) as KObject[]) items.push(kind ? ({ apiVersion, kind, ...it } as KObject) : it);
    } while (cont);
    return { items, resourceVersion: rv };
  }

  watch(group: string, resource: string, resourceVersion: string, onEvent: (ev: ObjectEvent) => void, onError: (err: Error) => void): ObjectWatch {
    const path = this.#path(group, resource, undefined);
    let rv = resourceVersion;
    let stopped = false;
    let current: IncomingMessage | undefined;
    let retries = 0;
    const maxRetries = this.o.watchRetries ?? 3;
    const handle = {
      stop: () => {
        stopped = true;
        current?.destroy();
        this.#watches.delete(handle);
      },
    };
    this.#watches.add(handle);
    const fail = (err: Error) => {
      if (stopped) return;
      handle.stop();
      onError(err);
    };
    const connect = (): void => {
      if (stopped) return;
      this.#open('GET', `${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`, undefined, 0).then(
        (res) => {
          if (stopped) {
            res.destroy();
            return;
          }
          if (res.statusCode === 410) {
            res.resume();
            fail(new HttpError(410, `watch of ${resource}: resourceVersion ${rv} is too old (410 Gone)`));
            return;
          }
          if (res.statusCode !== 200) {
            res.resume();
            reconnect(new HttpError(res.statusCode ?? 0, `watch of ${resource}: HTTP ${res.statusCode}`));
            return;
          }
          current = res;
          res.setEncoding('utf8');
          let buf = '';
          res.on('data', (chunk: string) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl).trim();
              buf = buf.slice(nl + 1);
              if (!line) continue;
              let ev: { type: string; object: KObject & { code?: number; message?: string } };
              try {
                ev = JSON.parse(line) as typeof ev;
              } catch {
                fail(new Error(`watch of ${resource}: a line that is not JSON`));
                return;
              }
              retries = 0;
              const objRv = ev.object?.metadata?.resourceVersion;
              if (ev.type === 'ERROR') {
                const code = ev.object.code ?? 0;
                fail(new HttpError(code, `watch of ${resource}: ${code === 410 ? '410 Gone: ' : ''}${ev.object.message ?? 'error event'}`));
                return;
              }
              if (objRv) rv = objRv;
              if (ev.type === 'BOOKMARK') continue;
              if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') onEvent({ type: ev.type, object: ev.object });
            }
          });
          res.on('end', () => reconnect(new Error(`watch of ${resource}: the stream ended`)));
          res.on('error', (err) => reconnect(err));
        },
        (err: Error) => reconnect(err),
      );
    };
    const reconnect = (err: Error): void => {
      if (stopped) return;
      current = undefined;
      if (retries++ >= maxRetries) {
        fail(err);
        return;
      }
      const t = setTimeout(connect, Math.min(100 * 2 ** retries, 2000));
      t.unref();
    };
    connect();
    return handle;
  }

  close(): void {
    this.#closed = true;
    for (const w of [...this.#watches]) w.stop();
    this.agent.destroy();
  }
}
