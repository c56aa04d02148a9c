// --audit-webhook-config-file: events POSTed as an audit.k8s.io/v1 EventList
// to the server a kubeconfig names (its TLS and credentials), retried with
// kube's webhook backoff (initial --audit-webhook-initial-backoff, ×1.5, five
// tries) on network errors, 429 and 5xx. With --audit-webhook-truncate-enabled
// the events pass the truncate plugin (truncate.ts) first: one request per
// batch of at most max-batch-size bytes.
import { ClientRequestError, type KubeClient } from '../../lib/kubeconfig/index.js';
import type { AuditBackend } from './backend.js';
import type { AuditEvent } from './event.js';
import type { Trace } from '../../lib/tracing/span.js';
import { encode, type Encoded, type Truncator } from './truncate.js';

const TRIES = 5;

export class WebhookBackend implements AuditBackend {
  readonly plugin = 'webhook';
  constructor(
    private readonly client: KubeClient,
    private readonly initialBackoffMs: number,
    private readonly truncate?: Truncator,
  ) {}

  async process(events: readonly AuditEvent[], _awaited?: boolean, trace?: Trace): Promise<void> {
    const batches = this.truncate ? this.truncate.split(events) : [encode(events)];
    // Every batch is tried; the first failure is the answer.
    const results = await Promise.allSettled(batches.map((b) => this.post(b, trace)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async post(batch: readonly Encoded[], trace: Trace | undefined): Promise<void> {
    const body = `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[${batch.map((e) => e.json).join(',')}]}`;
    let wait = this.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      let why: string;
      try {
        const reply = await this.client.request('POST', '', body, { 'content-type': 'application/json', accept: 'application/json' }, trace);
        if (reply.status >= 200 && reply.status < 300) return;
        why = `the audit webhook answered ${reply.status}`;
        if (reply.status !== 429 && reply.status < 500) throw new Error(why);
      } catch (err) {
        if (!(err instanceof ClientRequestError)) throw err;
        why = `the audit webhook could not be reached: ${err.message}`;
      }
      if (attempt >= TRIES) throw new Error(`${why} (after ${TRIES} tries)`);
      await new Promise((r) => setTimeout(r, wait).unref());
      wait *= 1.5;
    }
  }

  shutdown(): Promise<void> {
    this.client.close();
    return Promise.resolve();
  }
}
