// The FlowSchema half of kube-apiserver's APF config consumer: each
// FlowSchema's `Dangling` condition says whether the PriorityLevelConfiguration
// it names exists (True, reason NotFound) or not (False, reason Found), with
// kube's messages, written by server-side apply on the status subresource
// under kube's field manager. Every process sharing a store runs it, as every
// kube-apiserver does; they agree, and an unchanged condition is never rewritten.
import { rfc3339, type KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey, typePrefix } from '../keys.js';
import { guaranteedUpdate } from '../store/types.js';
import { fcType } from './apfbootstrap.js';
import { applyStatus } from './applystatus.js';
import { WatchingController } from './loop.js';

/** kube's `ConfigConsumerAsFieldManager`. */
export const APF_CONSUMER_FIELD_MANAGER = 'api-priority-and-fairness-config-consumer-v1';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

/** The condition kube's presyncFlowSchemaStatus wants for a schema naming `level`. */
export function danglingCondition(level: string, exists: boolean): Condition {
  return exists
    ? {
        type: 'Dangling',
        status: 'False',
        reason: 'Found',
        message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(level)} and it exists`,
      }
    : {
        type: 'Dangling',
        status: 'True',
        reason: 'NotFound',
        message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(level)} but there is no such object`,
      };
}

function levelName(fs: KObject): string {
  const ref = (fs['spec'] as { priorityLevelConfiguration?: { name?: unknown } } | undefined)?.priorityLevelConfiguration?.name;
  return typeof ref === 'string' ? ref : '';
}

function currentDangling(fs: KObject): Partial<Condition> | undefined {
  const conds = (fs['status'] as { conditions?: unknown } | undefined)?.conditions;
  if (!Array.isArray(conds)) return undefined;
  return conds.find((c): c is Partial<Condition> => typeof c === 'object' && c !== null && (c as { type?: unknown }).type === 'Dangling');
}

export class FlowSchemaStatusController extends WatchingController {
  private readonly schemas: ResourceType;
  private readonly levels: ResourceType;

  constructor(env: CoreEnv, retryMs?: number) {
    const schemas = fcType(env, 'flowschemas');
    const levels = fcType(env, 'prioritylevelconfigurations');
    super(env, 'flowschema-status', [typePrefix(schemas), typePrefix(levels)], retryMs);
    this.schemas = schemas;
    this.levels = levels;
  }

  protected async pass(): Promise<undefined> {
    const levels = new Set((await this.env.store.list(typePrefix(this.levels))).items.map((o) => o.metadata.name));
    const { items } = await this.env.store.list(typePrefix(this.schemas));
    for (const fs of items) {
      const level = levelName(fs);
      const want = danglingCondition(level, levels.has(level));
      if (same(currentDangling(fs), want)) continue;
      await this.write(fs.metadata.name ?? '', want);
    }
    return undefined;
  }

  private async write(name: string, want: Condition): Promise<void> {
    const t = this.schemas;
    // A schema deleted meanwhile is not written (guaranteedUpdate finds nothing).
    await guaranteedUpdate(this.env.store, objectKey(t, '', name), (cur) => {
      if (same(currentDangling(cur), want)) return null;
      const now = this.env.clock();
      return applyStatus(t, cur, { conditions: [{ ...want, lastTransitionTime: rfc3339(now) }] }, APF_CONSUMER_FIELD_MANAGER, now) ?? null;
    });
  }
}

function same(cur: Partial<Condition> | undefined, want: Condition): boolean {
  return cur !== undefined && cur.status === want.status && cur.reason === want.reason && cur.message === want.message;
}
