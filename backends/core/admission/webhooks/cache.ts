// The webhook configurations in force, read from the store and kept by a
// watch: every change (from any process sharing the store) rebuilds the two
// lookup indexes once, so a request only looks up its group and resource.
// Configurations are ordered by name, as kube orders them.
import type { KObject } from '../../../../lib/api/meta.js';
import { WatchingController } from '../../controllers/loop.js';
import type { CoreEnv } from '../../env.js';
import { typePrefix } from '../../keys.js';
import { RuleIndex } from '../matching/index.js';
import { webhooksOf, type Webhook } from './hooks.js';
import { WebhookClients } from './client.js';
import { serviceObjects } from '../../conversion.js';

const GROUP = 'admissionregistration.k8s.io';
const MUTATING = typePrefix({ group: GROUP, plural: 'mutatingwebhookconfigurations' });
const VALIDATING = typePrefix({ group: GROUP, plural: 'validatingwebhookconfigurations' });

export class WebhookConfigurations extends WatchingController {
  mutating = new RuleIndex<Webhook>([]);
  validating = new RuleIndex<Webhook>([]);

  /** The clients of the webhooks (and their connections), kept across calls and changes. */
  readonly clients: WebhookClients;

  constructor(env: CoreEnv) {
    super(env, 'admission-webhook-configurations', [MUTATING, VALIDATING]);
    this.clients = new WebhookClients((ref) => serviceObjects(env, ref), env.log);
  }

  override stop(): void {
    super.stop();
    this.clients.close();
  }

  protected async pass(): Promise<undefined> {
    const [m, v] = await Promise.all([this.env.store.list(MUTATING, { minRev: 0 }), this.env.store.list(VALIDATING, { minRev: 0 })]);
    this.mutating = new RuleIndex(hooks(m.items, true));
    this.validating = new RuleIndex(hooks(v.items, false));
    return undefined;
  }
}

function hooks(configs: readonly KObject[], mutating: boolean): Webhook[] {
  const sorted = [...configs].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  const out: Webhook[] = [];
  for (const c of sorted) out.push(...webhooksOf(c, mutating, out.length));
  return out;
}
