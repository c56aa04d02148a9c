// kube-apiserver's server identity (the APIServerIdentity feature): every
// process keeps a Lease kube-system/apiserver-<hash> labelled
// `apiserver.kubernetes.io/identity: kube-apiserver`, renewed every renew
// interval, so `kubectl get leases -n kube-system` shows the fleet. The
// leader collects the leases left expired (identityleasegc.ts).
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { leases } from '../../../lib/registry/builtins/coordination.js';
import type { KObject } from '../../../lib/api/meta.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { prepareCreate, prepareUpdate } from '../objects.js';
import { guaranteedUpdate, StoreError } from '../store/types.js';
import { microTime } from './leaderelection/record.js';

export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
export const IDENTITY_VALUE = 'kube-apiserver';
export const IDENTITY_NAMESPACE = 'kube-system';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** kube's id: `apiserver-` + lowercase unpadded base32 of the first 16 bytes of sha256(seed). */
export function serverId(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest().subarray(0, 16);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return `apiserver-${out}`;
}

export interface IdentityLeaseConfig {
  /** What the lease name is hashed from: kube hashes the hostname; several processes on one host add their port. */
  readonly seed: string;
  readonly leaseDurationSeconds: number;
  readonly renewIntervalMs: number;
}

export class IdentityLease {
  readonly name: string;
  readonly holderIdentity: string;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;

  constructor(
    private readonly env: CoreEnv,
    private readonly config: IdentityLeaseConfig,
  ) {
    this.name = serverId(config.seed);
    this.holderIdentity = `${this.name}_${randomUUID()}`;
  }

  /** Writes the lease once (the hook waits for it), then renews it every interval. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.renew();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async renew(): Promise<void> {
    try {
      await this.write();
    } catch (err) {
      this.env.log(`identity lease ${IDENTITY_NAMESPACE}/${this.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.renew(), this.config.renewIntervalMs);
    this.timer.unref();
  }

  private desired(current?: KObject): KObject {
    const labels = { ...(current?.metadata.labels ?? {}), [IDENTITY_LABEL]: IDENTITY_VALUE, 'kubernetes.io/hostname': hostname() };
    const spec = { holderIdentity: this.holderIdentity, leaseDurationSeconds: this.config.leaseDurationSeconds, renewTime: microTime(this.env.clock()) };
    if (current)
      return { ...structuredClone(current), metadata: { ...structuredClone(current.metadata), labels }, spec: { ...(current['spec'] as object), ...spec } };
    return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.name, namespace: IDENTITY_NAMESPACE, labels }, spec };
  }

  private async write(): Promise<void> {
    const key = objectKey(leases, IDENTITY_NAMESPACE, this.name);
    const updated = await guaranteedUpdate(
      this.env.store,
      key,
      (cur) => prepareUpdate(leases, this.desired(cur), cur, 'main', undefined, this.env.clock()) ?? null,
    );
    if (updated) return;
    try {
      await this.env.store.create(key, prepareCreate(leases, this.desired(), this.env.clock()));
    } catch (err) {
      // Collected and recreated between the read and the create by another writer: the next renewal updates it.
      if (!(err instanceof StoreError && err.code === 'exists')) throw err;
    }
  }
}
