// A real HTTPS audit webhook for the tests: it records every EventList it is
// sent, and can be told to fail (500), to hang, or be closed (down).
import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateCa, generateServingCert } from '../../certs/pki.js';

export interface AuditReceiver {
  readonly url: string;
  /** Every event received, in order. */
  readonly events: Array<Record<string, unknown>>;
  /** Requests received (one per batch). */
  posts: number;
  /** The items of each EventList received, each as its JSON (for sizes). */
  readonly batches: string[][];
  /** The traceparent header of each request received ('' when none). */
  readonly traceparents: string[];
  mode: 'ok' | 'fail' | 'hang';
  /** Answers (200) the requests 'hang' holds: a server's shutdown then need not wait out its webhook client's 30 s timeout. */
  release(): void;
  kubeconfig(dir: string): Promise<string>;
  close(): Promise<void>;
}

export async function startAuditReceiver(): Promise<AuditReceiver> {
  const ca = generateCa('audit-webhook-ca');
  const serving = generateServingCert(ca);
  const hanging = new Set<ServerResponse>();
  const r: AuditReceiver = {
    url: '',
    events: [],
    posts: 0,
    batches: [],
    traceparents: [],
    mode: 'ok',
    async kubeconfig(dir) {
      const file = join(dir, 'audit-webhook.kubeconfig');
      await writeFile(
        file,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'audit',
          clusters: [{ name: 'audit', cluster: { server: r.url, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
          users: [{ name: 'apiserver', user: {} }],
          contexts: [{ name: 'audit', context: { cluster: 'audit', user: 'apiserver' } }],
        }),
      );
      return file;
    },
    release() {
      for (const res of hanging) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      hanging.clear();
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.posts++;
      r.traceparents.push(String(req.headers.traceparent ?? ''));
      if (r.mode === 'hang') {
        hanging.add(res);
        return;
      }
      if (r.mode === 'fail') {
        res.writeHead(500).end('no');
        return;
      }
      const list = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { kind: string; apiVersion: string; items: Array<Record<string, unknown>> };
      if (list.kind !== 'EventList' || list.apiVersion !== 'audit.k8s.io/v1') {
        res.writeHead(400).end();
        return;
      }
      r.events.push(...list.items);
      r.batches.push(list.items.map((i) => JSON.stringify(i)));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (r as { url: string }).url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/audit`;
  return r;
}
