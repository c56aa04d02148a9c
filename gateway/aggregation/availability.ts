// The availability controller (kube-aggregator's remote availability
// controller): probes every remote APIService and keeps
// status.conditions[type=Available] current with kube's reasons —
// ServiceNotFound / ServicePortError / MissingEndpoints from resolution,
// FailedDiscoveryCheck when GET /apis/<group>/<version> on the backend fails
// or is not 2xx, Passed otherwise. Every APIService is probed on change,
// every `intervalMs`, and at once when the proxy could not reach it; a
// failing one is probed again with a backoff (0.5 s doubling to 5 s), so a
// restarted backend is seen quickly. Status is written only when it changes.
import { forgetApiService, recordAvailability } from '../metrics/aggregator.js';
import type { Condition } from './apiservice.js';
import type { ApiServiceProxy } from './proxy.js';
import type { ServiceResolver } from './resolver.js';

export type StatusWriter = (apiService: string, cond: Condition, now: number) => Promise<void>;

export interface AvailabilityOptions {
  readonly proxy: (apiService: string) => ApiServiceProxy | undefined;
  readonly names: () => Iterable<string>;
  readonly resolver: ServiceResolver;
  readonly write: StatusWriter;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  readonly intervalMs?: number;
  readonly probeTimeoutMs?: number;
}

/** kube-aggregator probes as this user, which every backend lets read discovery. */
const PROBE_IDENTITY = { 'X-Remote-User': 'system:kube-aggregator', 'X-Remote-Group': ['system:masters', 'system:authenticated'] };

export class AvailabilityController {
  readonly #queued = new Map<string, NodeJS.Timeout>();
  readonly #backoff = new Map<string, number>();
  readonly #running = new Set<string>();
  #interval: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(private readonly opts: AvailabilityOptions) {}

  start(): void {
    this.#interval = setInterval(() => {
      for (const n of this.opts.names()) this.enqueue(n);
    }, this.opts.intervalMs ?? 30_000);
    this.#interval.unref();
    for (const n of this.opts.names()) this.enqueue(n);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#interval) clearInterval(this.#interval);
    for (const t of this.#queued.values()) clearTimeout(t);
    this.#queued.clear();
  }

  /** Probes soon (coalesced); `delayMs` for retries. */
  enqueue(name: string, delayMs = 0): void {
    if (this.#stopped) return;
    const pending = this.#queued.get(name);
    if (pending && delayMs > 0) return;
    if (pending) clearTimeout(pending);
    const t = setTimeout(() => {
      this.#queued.delete(name);
      void this.#run(name);
    }, delayMs);
    t.unref();
    this.#queued.set(name, t);
  }

  async #run(name: string): Promise<void> {
    if (this.#running.has(name)) {
      this.enqueue(name, 100);
      return;
    }
    this.#running.add(name);
    try {
      const cond = await this.check(name);
      if (!cond) {
        forgetApiService(name);
        return;
      }
      const p = this.opts.proxy(name);
      const cur = p?.info.available;
      recordAvailability(name, cond.status === 'True', cond.reason, cur?.status !== cond.status);
      if (!cur || cur.status !== cond.status || cur.reason !== cond.reason || cur.message !== cond.message) {
        await this.opts.write(name, cond, (this.opts.clock ?? Date.now)()).catch((err: unknown) => {
          this.opts.log(`aggregation: cannot write the status of APIService ${name}: ${err instanceof Error ? err.message : String(err)}`);
        });
        if (cur?.status !== cond.status)
          this.opts.log(`aggregation: APIService ${name} is ${cond.status === 'True' ? 'available' : `unavailable (${cond.reason}: ${cond.message})`}`);
      }
      if (cond.status === 'True') {
        this.#backoff.delete(name);
      } else {
        const wait = this.#backoff.get(name) ?? 500;
        this.#backoff.set(name, Math.min(wait * 2, 5000));
        this.enqueue(name, wait);
      }
    } finally {
      this.#running.delete(name);
    }
  }

  /** The condition a probe finds now; undefined when the APIService is gone or local. */
  async check(name: string): Promise<Condition | undefined> {
    const p = this.opts.proxy(name);
    if (!p?.info.service) return undefined;
    const { info } = p;
    const res = this.opts.resolver.resolve(info.service!);
    if (!('targets' in res)) return { status: 'False', reason: res.reason, message: res.message };
    const target = this.opts.resolver.pick(info.service!);
    if ('reason' in target) return { status: 'False', reason: target.reason, message: target.message };
    const path = `/apis/${info.group}/${info.version}`;
    const url = `https://${target.host}:${target.port}${path}`;
    try {
      const r = await p.transport.get(target, path, { ...PROBE_IDENTITY, Accept: 'application/json' }, this.opts.probeTimeoutMs ?? 5000);
      if (r.status >= 200 && r.status < 300) return { status: 'True', reason: 'Passed', message: 'all checks passed' };
      return { status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${url}: bad status from ${url}: ${r.status}` };
    } catch (err) {
      return {
        status: 'False',
        reason: 'FailedDiscoveryCheck',
        message: `failing or missing response from ${url}: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }
}

/** status with its Available condition set to `cond` (lastTransitionTime moves only when status changes); null when unchanged. */
export function withAvailableCondition(status: Record<string, unknown> | undefined, cond: Condition, now: number): Record<string, unknown> | null {
  const conds = Array.isArray(status?.['conditions']) ? (status['conditions'] as Array<Record<string, unknown>>) : [];
  const cur = conds.find((c) => c['type'] === 'Available');
  if (cur && cur['status'] === cond.status && cur['reason'] === cond.reason && cur['message'] === cond.message) return null;
  const lastTransitionTime =
    cur && cur['status'] === cond.status && typeof cur['lastTransitionTime'] === 'string'
      ? cur['lastTransitionTime']
      : new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const next = { type: 'Available', status: cond.status, lastTransitionTime, reason: cond.reason, message: cond.message };
  return { ...status, conditions: [...conds.filter((c) => c['type'] !== 'Available'), next] };
}
