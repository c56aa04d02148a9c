// kube-controller-manager's csrcleaner: CertificateSigningRequests are removed
// once they served their purpose — denied or failed ones an hour after that
// condition, issued ones an hour after approval or as soon as their certificate
// expires, pending ones after a day. Wakes at the next deadline of the
// injected clock, and on every change.
import { X509Certificate } from 'node:crypto';
import type { KObject } from '../../../lib/api/meta.js';
import { certificateOf, conditionsOf } from '../../../lib/certificates/conditions.js';
import { time } from '../../../lib/registry/fields.js';
import type { CoreEnv } from '../env.js';
import type { StoreEvent } from '../store/types.js';
import { csrPrefix, csrType, listCsrs } from './csrs.js';
import { deleteStored, WatchingController } from './loop.js';

const HOUR_MS = 3600_000;
const DECIDED_TTL_MS = HOUR_MS;
const PENDING_TTL_MS = 24 * HOUR_MS;

/** The certificate's notAfter; undefined when there is none or it does not parse. */
function certificateExpiry(csr: KObject): number | undefined {
  const b64 = certificateOf(csr);
  if (b64 === '') return undefined;
  try {
    return Date.parse(new X509Certificate(Buffer.from(b64, 'base64')).validTo);
  } catch {
    return undefined;
  }
}

/** When kube's cleaner removes this request. */
export function removalTime(csr: KObject): number | undefined {
  const conditions = conditionsOf(csr);
  const updated = (type: string) => {
    const c = conditions.find((x) => x['type'] === type);
    return c ? (time(c, 'lastUpdateTime') ?? 0) : undefined;
  };
  const times: number[] = [];
  const expiry = certificateExpiry(csr);
  if (expiry !== undefined && updated('Approved') !== undefined) times.push(expiry);
  if (conditions.length === 0) times.push((time(csr.metadata, 'creationTimestamp') ?? 0) + PENDING_TTL_MS);
  for (const type of ['Denied', 'Failed']) {
    const at = updated(type);
    if (at !== undefined) times.push(at + DECIDED_TTL_MS);
  }
  const approvedAt = updated('Approved');
  if (certificateOf(csr) !== '' && approvedAt !== undefined) times.push(approvedAt + DECIDED_TTL_MS);
  return times.length ? Math.min(...times) : undefined;
}

export class CsrCleaner extends WatchingController {
  /** The next removal the last pass found (its timer is armed). */
  private nextAt: number | undefined;

  constructor(env: CoreEnv) {
    super(env, 'csrcleaner', [csrPrefix(env)]);
  }

  /**
   * A change asks for a pass only when it moves the next removal earlier, or
   * when that moment has come (the clock is the injected one): a burst of new
   * requests lists nothing.
   */
  protected override onEvent(ev: StoreEvent): void {
    const now = this.env.clock();
    const at = ev.type === 'DELETED' ? undefined : removalTime(ev.object);
    if ((this.nextAt !== undefined && this.nextAt <= now) || (at !== undefined && (this.nextAt === undefined || at < this.nextAt))) this.requestPass();
  }

  protected async pass(): Promise<number | undefined> {
    const now = this.env.clock();
    let next: number | undefined;
    for (const csr of await listCsrs(this.env)) {
      const at = removalTime(csr);
      if (at === undefined || csr.metadata.deletionTimestamp) continue;
      if (at <= now) {
        if (await deleteStored(this.env, csrType(this.env), csr)) this.env.log(`csrcleaner: deleted ${csr.metadata.name ?? ''}`);
      } else if (next === undefined || at < next) {
        next = at;
      }
    }
    this.nextAt = next;
    return next;
  }
}
