// The token cleaner (kube-controller-manager's `tokencleaner`): deletes
// bootstrap token secrets in kube-system once their `expiration` has passed
// (an unparseable expiration counts as passed, as in kube). Wakes at the
// next expiration of the injected clock, and on every change of the secrets.
import { BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, parseRfc3339, secretValue } from '../../../lib/bootstrap/token.js';
import type { CoreEnv } from '../env.js';
import { listPrefix } from '../keys.js';
import { coreType, deleteStored, WatchingController } from './loop.js';

export class TokenCleaner extends WatchingController {
  constructor(env: CoreEnv, retryMs?: number) {
    super(env, 'tokencleaner', [listPrefix(coreType(env, 'secrets'), BOOTSTRAP_TOKEN_NAMESPACE)], retryMs);
  }

  protected async pass(): Promise<number | undefined> {
    const t = coreType(this.env, 'secrets');
    const { items } = await this.env.store.list(listPrefix(t, BOOTSTRAP_TOKEN_NAMESPACE));
    const now = this.env.clock();
    let next: number | undefined;
    for (const secret of items) {
      if (secret['type'] !== BOOTSTRAP_TOKEN_SECRET_TYPE || secret.metadata.deletionTimestamp) continue;
      const raw = secretValue(secret, 'expiration');
      if (raw === undefined || raw === '') continue;
      const at = parseRfc3339(raw);
      if (Number.isNaN(at) || at <= now) {
        if (await deleteStored(this.env, t, secret)) {
          this.env.log(`tokencleaner: deleted expired bootstrap token secret ${BOOTSTRAP_TOKEN_NAMESPACE}/${secret.metadata.name ?? ''}`);
        }
      } else if (next === undefined || at < next) {
        next = at;
      }
    }
    return next;
  }
}
