// kube-apiserver's `priority-and-fairness-config-producer` hook: the bootstrap
// FlowSchemas and PriorityLevelConfigurations of policies/flowcontrol are
// created at start and checked again every minute. A mandatory object whose
// spec was changed is put back (and annotated autoupdate-spec "true"); a
// suggested one is updated only while its annotation says "true", so that an
// operator who sets it to "false" keeps their own version. Objects annotated
// "true" that are no longer in the bootstrap lists (schemas kube dropped, such
// as `endpoint-controller`) are deleted, as kube's ensurer removes them.
import type { KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import {
  AUTOUPDATE_SPEC_ANNOTATION,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from '../../../policies/flowcontrol/index.js';
import type { CoreEnv } from '../env.js';
import { objectKey, typePrefix } from '../keys.js';
import { prepareUpdate } from '../objects.js';
import { guaranteedUpdate } from '../store/types.js';
import { deleteStored, getOrCreate } from './loop.js';

const GROUP = 'flowcontrol.apiserver.k8s.io';
const json = (v: unknown) => JSON.stringify(v);

/** A flowcontrol.apiserver.k8s.io/v1 type of the registry (its controllers need both). */
export function fcType(env: CoreEnv, plural: string): ResourceType {
  const t = env.registry.lookup(GROUP, 'v1', plural);
  if (!t) throw new Error(`the registry has no ${GROUP}/v1 ${plural} type`);
  return t;
}

/** The spec as stored: the bootstrap object with the type's defaults applied. */
function defaultedSpec(t: ResourceType, obj: KObject): unknown {
  const copy = structuredClone(obj);
  t.defaults?.(copy);
  return copy['spec'];
}

/** Go's strconv.ParseBool, which kube applies to the annotation: undefined when it is no boolean. */
function parseGoBool(v: string | undefined): boolean | undefined {
  if (v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True') return true;
  if (v === '0' || v === 'f' || v === 'F' || v === 'false' || v === 'FALSE' || v === 'False') return false;
  return undefined;
}

/** kube's shouldUpdateSpec: the annotation decides; without a boolean one, an object its operator never changed (generation 1) is kept current. */
function autoUpdates(obj: KObject): boolean {
  return parseGoBool(obj.metadata.annotations?.[AUTOUPDATE_SPEC_ANNOTATION]) ?? obj.metadata.generation === 1;
}

async function ensure(env: CoreEnv, t: ResourceType, expected: KObject, mandatory: boolean): Promise<void> {
  const key = objectKey(t, '', expected.metadata.name!);
  const want = defaultedSpec(t, expected);
  if (!(await getOrCreate(env, t, key, expected))) return;
  await guaranteedUpdate(env.store, key, (cur) => {
    const auto = cur.metadata.annotations?.[AUTOUPDATE_SPEC_ANNOTATION];
    if (!mandatory && !autoUpdates(cur)) return null;
    if (json(cur['spec']) === json(want) && auto === 'true') return null;
    const next = structuredClone(cur);
    next['spec'] = structuredClone(want);
    next.metadata.annotations = { ...next.metadata.annotations, [AUTOUPDATE_SPEC_ANNOTATION]: 'true' };
    return prepareUpdate(t, next, cur, 'main') ?? null;
  });
}

/** Deletes the objects kube's ensurer would: annotated autoupdate-spec true (Go boolean) and not wanted. */
async function removeUnwanted(env: CoreEnv, t: ResourceType, wanted: KObject[]): Promise<void> {
  const names = new Set(wanted.map((o) => o.metadata.name));
  const { items } = await env.store.list(typePrefix(t));
  for (const obj of items) {
    if (names.has(obj.metadata.name) || parseGoBool(obj.metadata.annotations?.[AUTOUPDATE_SPEC_ANNOTATION]) !== true) continue;
    if (await deleteStored(env, t, obj))
      env.log(`priority-and-fairness-config-producer: deleted ${t.kind} ${obj.metadata.name ?? ''}, no longer a bootstrap object`);
  }
}

/** One pass over every bootstrap object: levels first, so that no schema dangles. */
export async function ensureApfBootstrap(env: CoreEnv): Promise<void> {
  const levels = fcType(env, 'prioritylevelconfigurations');
  const schemas = fcType(env, 'flowschemas');
  for (const o of mandatoryPriorityLevels()) await ensure(env, levels, o, true);
  for (const o of suggestedPriorityLevels()) await ensure(env, levels, o, false);
  for (const o of mandatoryFlowSchemas()) await ensure(env, schemas, o, true);
  for (const o of suggestedFlowSchemas()) await ensure(env, schemas, o, false);
  await removeUnwanted(env, schemas, [...mandatoryFlowSchemas(), ...suggestedFlowSchemas()]);
  await removeUnwanted(env, levels, [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()]);
}

/** The hook's loop: at start (retried while the store is not ready), then every `periodMs`. */
export class ApfBootstrap {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  constructor(
    private readonly env: CoreEnv,
    private readonly periodMs = 60_000,
  ) {}

  async start(attempts = 30, pauseMs = 1000): Promise<void> {
    for (let i = 1; ; i++) {
      try {
        await ensureApfBootstrap(this.env);
        break;
      } catch (err) {
        if (i >= attempts || this.stopped) throw err;
        this.env.log(`priority-and-fairness-config-producer: ${err instanceof Error ? err.message : String(err)}; retrying`);
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    // start() again (a test's "next pass") replaces the pending pass rather than adding one.
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      ensureApfBootstrap(this.env)
        .catch((err: unknown) => {
          this.env.log(`priority-and-fairness-config-producer: ${err instanceof Error ? err.message : String(err)}`);
        })
        .finally(() => this.schedule());
    }, this.periodMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
