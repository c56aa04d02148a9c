// One real HTTPS webhook for the tracing tests, answering both reviews the
// gateway sends: TokenReview (`good-token` is user `traced-user`) and
// SubjectAccessReview (that user may touch configmaps, nothing else), each
// in the apiVersion it received. It records the trace headers of every call.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateCa, generateServingCert } from '../../certs/pki.js';

export interface ReviewWebhook {
  /** Each call: the review's kind and the traceparent it came with. */
  readonly calls: Array<{ kind: string; traceparent: string | undefined }>;
  kubeconfig(dir: string, name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startReviewWebhook(): Promise<ReviewWebhook> {
  const ca = generateCa('tracing-webhook-ca');
  const serving = generateServingCert(ca);
  const calls: ReviewWebhook['calls'] = [];
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; kind: string; spec: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
      calls.push({ kind: review.kind, traceparent: req.headers.traceparent as string | undefined });
      const answer = (status: Record<string, unknown>) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: review.apiVersion, kind: review.kind, status }));
      if (review.kind === 'TokenReview') {
        answer(
          review.spec['token'] === 'good-token' ? { authenticated: true, user: { username: 'traced-user', groups: ['tracers'] } } : { authenticated: false },
        );
      } else {
        const ok = review.spec['user'] === 'traced-user' && review.spec['resourceAttributes']?.resource === 'configmaps';
        answer({ allowed: ok, ...(ok ? { reason: 'configmaps are fine' } : {}) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/review`;
  return {
    calls,
    async kubeconfig(dir, name) {
      const file = join(dir, `${name}.kubeconfig`);
      await writeFile(
        file,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'hook',
          clusters: [{ name: 'hook', cluster: { server: url, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
          users: [{ name: 'apiserver', user: {} }],
          contexts: [{ name: 'hook', context: { cluster: 'hook', user: 'apiserver' } }],
        }),
      );
      return file;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
