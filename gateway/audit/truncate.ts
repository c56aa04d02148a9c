// --audit-*-truncate-enabled: kube's truncate plugin. An event whose JSON is
// larger than max-event-size loses its request and response objects and is
// annotated `audit.k8s.io/truncated: "true"` (only from level Request, where
// there are bodies); one still too large is dropped and reported. Events go on
// in batches of at most max-batch-size bytes (a webhook request each).
import { eventJson, type AuditEvent } from './event.js';

export interface TruncateConfig {
  readonly maxEventSize: number;
  readonly maxBatchSize: number;
}

/** An event with the JSON it is sent as. */
export interface Encoded {
  readonly event: AuditEvent;
  readonly json: string;
}

export function encode(events: readonly AuditEvent[]): Encoded[] {
  return events.map((event) => ({ event, json: eventJson(event) }));
}

export class Truncator {
  constructor(
    private readonly config: TruncateConfig,
    private readonly onDropped: (events: readonly AuditEvent[], why: string) => void,
  ) {}

  /** The events as batches within the limits; events too large even without bodies are left out and reported. */
  split(events: readonly AuditEvent[]): Encoded[][] {
    const batches: Encoded[][] = [];
    const dropped: AuditEvent[] = [];
    let batch: Encoded[] = [];
    let batchSize = 0;
    for (const original of events) {
      let event = original;
      let json = eventJson(event);
      let size = Buffer.byteLength(json);
      if (size > this.config.maxEventSize && event.level !== 'None' && event.level !== 'Metadata') {
        event = truncated(event);
        json = eventJson(event);
        size = Buffer.byteLength(json);
      }
      if (size > this.config.maxEventSize) {
        dropped.push(event);
        continue;
      }
      if (batch.length > 0 && batchSize + size > this.config.maxBatchSize) {
        batches.push(batch);
        batch = [];
        batchSize = 0;
      }
      batch.push({ event, json });
      batchSize += size;
    }
    if (batch.length > 0) batches.push(batch);
    if (dropped.length > 0) this.onDropped(dropped, 'event is too large even after truncating');
    return batches;
  }
}

function truncated(e: AuditEvent): AuditEvent {
  const { requestObject: _req, responseObject: _res, ...rest } = e;
  return { ...rest, annotations: { ...(e.annotations ?? {}), 'audit.k8s.io/truncated': 'true' } };
}
