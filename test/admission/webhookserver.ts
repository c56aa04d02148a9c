// A real HTTPS admission webhook server for the admission tests, with its own
// CA: every path is one webhook whose answer the test sets (allow, deny, a
// JSONPatch, warnings, audit annotations, or one of the wrong answers kube
// guards against: another uid, not an AdmissionReview, garbage, a 500, a
// patch type other than JSONPatch, a huge patch, an answer past the timeout).
// It records every AdmissionReview it receives, per path.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateCa, generateServingCert, type CertKeyPair } from '../../certs/pki.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export type Answer =
  | { kind: 'allow'; warnings?: string[]; auditAnnotations?: Record<string, string> }
  | { kind: 'deny'; message?: string; code?: number; reason?: string }
  | { kind: 'patch'; ops: Json[] | ((review: Json) => Json[]); patchType?: string }
  | { kind: 'wrong-uid' }
  | { kind: 'not-review' }
  | { kind: 'garbage' }
  | { kind: 'http-500' }
  | { kind: 'huge-patch' }
  | { kind: 'slow'; ms: number };

export interface WebhookServer {
  readonly base: string;
  readonly ca: CertKeyPair;
  readonly caBundle: string;
  /** The answer of each path (default: allow). */
  readonly answers: Map<string, Answer>;
  /** Reviews received per path, in order. */
  readonly reviews: Map<string, Json[]>;
  /** Requests in flight, and the most ever in flight at once (parallel calls). */
  maxInFlight: number;
  url(path: string): string;
  received(path: string): Json[];
  reset(): void;
  close(): Promise<void>;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

export async function startWebhookServer(hosts: string[] = []): Promise<WebhookServer> {
  const ca = generateCa('admission-webhook-ca');
  const serving = generateServingCert(ca, { hosts });
  const answers = new Map<string, Answer>();
  const reviews = new Map<string, Json[]>();
  let inFlight = 0;
  const state = { maxInFlight: 0 };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    const chunks: Buffer[] = [];
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      const list = reviews.get(path) ?? [];
      list.push(review);
      reviews.set(path, list);
      const answer = answers.get(path) ?? { kind: 'allow' };
      const uid = review.request.uid as string;
      const send = (status: number, body: string, type = 'application/json') => {
        inFlight--;
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      const reply = (response: Json) => send(200, JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid, ...response } }));
      // A little wait lets the other webhooks' calls arrive meanwhile (parallel calls are seen as such).
      const t = setTimeout(() => {
        timers.delete(t);
        switch (answer.kind) {
          case 'allow':
            return reply({
              allowed: true,
              ...(answer.warnings ? { warnings: answer.warnings } : {}),
              ...(answer.auditAnnotations ? { auditAnnotations: answer.auditAnnotations } : {}),
            });
          case 'deny':
            return reply({
              allowed: false,
              status: {
                ...(answer.message ? { message: answer.message } : {}),
                ...(answer.code ? { code: answer.code } : {}),
                ...(answer.reason ? { reason: answer.reason } : {}),
              },
            });
          case 'patch': {
            const ops = typeof answer.ops === 'function' ? answer.ops(review) : answer.ops;
            return reply({ allowed: true, patchType: answer.patchType ?? 'JSONPatch', patch: b64(ops) });
          }
          case 'wrong-uid':
            return send(200, JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: 'another-uid', allowed: true } }));
          case 'not-review':
            return send(200, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }));
          case 'garbage':
            return send(200, 'this is not JSON at all', 'text/plain');
          case 'http-500':
            return send(500, 'internal trouble', 'text/plain');
          case 'huge-patch':
            return reply({
              allowed: true,
              patchType: 'JSONPatch',
              patch: b64([{ op: 'add', path: '/metadata/annotations', value: { big: 'x'.repeat(10 * 1024 * 1024) } }]),
            });
          case 'slow': {
            const late = setTimeout(() => {
              timers.delete(late);
              reply({ allowed: true });
            }, answer.ms);
            timers.add(late);
            return undefined;
          }
        }
      }, 20);
      timers.add(t);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `https://127.0.0.1:${port}`;
  const hook: WebhookServer = {
    base,
    ca,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    answers,
    reviews,
    get maxInFlight() {
      return state.maxInFlight;
    },
    set maxInFlight(v: number) {
      state.maxInFlight = v;
    },
    url: (path) => `${base}${path}`,
    received: (path) => reviews.get(path) ?? [],
    reset() {
      answers.clear();
      reviews.clear();
      state.maxInFlight = 0;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return hook;
}
