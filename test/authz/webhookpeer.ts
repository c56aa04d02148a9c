// A real HTTPS authorization webhook for the tests: it answers every
// SubjectAccessReview by a keyword in the user name (allow, deny, pass,
// garbage, wrongversion, 500, hang), in the apiVersion it received, and
// records what it was sent.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateCa, generateServingCert } from '../../certs/pki.js';

export interface WebhookPeer {
  readonly url: string;
  /** Reviews received, oldest first. */
  readonly received: Array<{ apiVersion: string; kind: string; spec: Record<string, unknown> }>;
  /** Writes a kubeconfig naming this webhook (server URL + `suffix`) and returns its path. */
  kubeconfig(dir: string, name: string, suffix?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startWebhookPeer(): Promise<WebhookPeer> {
  const ca = generateCa('webhook-ca');
  const serving = generateServingCert(ca);
  const received: WebhookPeer['received'] = [];
  const hanging = new Set<ServerResponse>();
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    let review: { apiVersion: string; kind: string; spec: Record<string, unknown> };
    try {
      review = JSON.parse(body);
    } catch {
      res.writeHead(400).end();
      return;
    }
    received.push(review);
    const user = String(review.spec['user'] ?? '');
    const send = (status: Record<string, unknown>, apiVersion = review.apiVersion) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion, kind: 'SubjectAccessReview', status }));
    };
    if (user.includes('hang')) {
      hanging.add(res);
      return;
    }
    if (user.includes('garbage')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status": {"allowed": tru');
      return;
    }
    if (user.includes('wrongversion')) {
      send({ allowed: true }, 'authorization.k8s.io/v0');
      return;
    }
    if (user.includes('500')) {
      res.writeHead(500).end('boom');
      return;
    }
    if (user.includes('allow')) {
      send({ allowed: true, reason: 'peer says yes' });
      return;
    }
    if (user.includes('deny')) {
      send({ allowed: false, denied: true, reason: 'peer says no' });
      return;
    }
    send({ allowed: false, reason: 'peer has no opinion' });
    void req;
  };
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
  return {
    url,
    received,
    async kubeconfig(dir, name, suffix = '') {
      const file = join(dir, `${name}.kubeconfig`);
      const cfg = {
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'webhook',
        clusters: [{ name: 'webhook', cluster: { server: url + suffix, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
        users: [{ name: 'apiserver', user: {} }],
        contexts: [{ name: 'webhook', context: { cluster: 'webhook', user: 'apiserver' } }],
      };
      await writeFile(file, JSON.stringify(cfg));
      return file;
    },
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
