// The outbound TLS of one APIService, built once per change of its
// transport-relevant fields (service, caBundle, insecureSkipTLSVerify): a
// keep-alive agent that verifies the backend's certificate against the
// APIService's caBundle for the name `<service>.<namespace>.svc`, and
// presents the front-proxy client certificate. Also a small GET for the
// availability probe and discovery fetches, over the same agent.
import { Agent, request } from 'node:https';
import type { OutgoingHttpHeaders } from 'node:http';
import { serverNameOf, type ApiServiceInfo } from './apiservice.js';
import type { Target } from './resolver.js';

export interface ProxyClientCert { readonly certPem: string; readonly keyPem: string }

export interface BackendTls {
  /** Roots the backend's certificate must chain to; none: the system roots. */
  readonly caPem?: string | undefined;
  /** Presented to the backend (the front-proxy client certificate). */
  readonly clientCert?: ProxyClientCert | undefined;
  /** The name the backend's certificate must carry, when not the host connected to. */
  readonly serverName?: string;
  /** false only for insecureSkipTLSVerify. */
  readonly verify?: boolean;
}

/** The keep-alive HTTPS agent every proxy path uses to reach a backend (APIServices, the remote core backend, an https sidecar upstream). */
export function backendAgent(t: BackendTls): Agent {
  return new Agent({
    keepAlive: true,
    maxFreeSockets: 64,
    ...(t.serverName ? { servername: t.serverName } : {}),
    rejectUnauthorized: t.verify ?? true,
    ...(t.caPem ? { ca: t.caPem } : {}),
    ...(t.clientCert ? { cert: t.clientCert.certPem, key: t.clientCert.keyPem } : {}),
    minVersion: 'TLSv1.2',
  });
}

export class Transport {
  readonly agent: Agent;
  readonly serverName: string;
  readonly verify: boolean;

  constructor(info: ApiServiceInfo, clientCert: ProxyClientCert | undefined) {
    if (!info.service) throw new Error(`APIService "${info.name}" is local: it has no transport`);
    this.serverName = serverNameOf(info.service);
    this.verify = !info.insecureSkipTLSVerify;
    // No caBundle: the system roots, as kube does.
    this.agent = backendAgent({ caPem: info.caPem, clientCert, serverName: this.serverName, verify: this.verify });
  }

  /** One GET with a deadline; the body is capped at `maxBytes`. */
  get(target: Target, path: string, headers: OutgoingHttpHeaders, timeoutMs: number, maxBytes = 8 * 1024 * 1024): Promise<{ status: number; body: Buffer; contentType: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: target.host, port: target.port, path, method: 'GET', agent: this.agent, headers, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) req.destroy(new Error(`response larger than ${maxBytes} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), contentType: String(res.headers['content-type'] ?? '') }));
        res.on('error', reject);
      });
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs}ms`)), timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs}ms`)));
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
