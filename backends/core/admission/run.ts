// Runs the two admission phases of one write with the backend's plugins in
// force; a recorded request gets one `admission` span per phase that has
// plugins (attribute `admission.plugins`), under the request's span.
// A plugin that has nothing to judge returns synchronously (no async
// function), and the runner awaits only what a plugin gives it to await: a
// write no plugin waits on runs its admission without a promise turn, and a
// plugin that does not apply costs one call (the create path's figures:
// docs/decisions/2026-11-29-create-cost-after-admission-move.md).
import type { KObject } from '../../../lib/api/meta.js';
import { inSpan } from '../../../lib/tracing/span.js';
import type { CoreEnv } from '../env.js';
import { BUILTIN_ADMISSION } from './build.js';
import type { AdmissionAttributes, MutatingPlugin, ValidatingPlugin } from './types.js';

/** The object after the mutating plugins (the same object when none changed it); a promise only when a plugin waits. */
export function mutate(env: CoreEnv, a: AdmissionAttributes): KObject | undefined | Promise<KObject | undefined> {
  const plugins = (env.admission ?? BUILTIN_ADMISSION).mutating;
  if (plugins.length === 0) return a.object;
  if (!env.trace) return runMutating(plugins, 0, env, a, a.object);
  return inSpan(env.trace, 'admission', attributes('mutating', plugins), async () => runMutating(plugins, 0, env, a, a.object));
}

/** Throws the first refusal of a validating plugin; a promise only when a plugin waits. */
export function validate(env: CoreEnv, a: AdmissionAttributes): Promise<void> | undefined {
  const plugins = (env.admission ?? BUILTIN_ADMISSION).validating;
  if (plugins.length === 0) return undefined;
  if (!env.trace) return runValidating(plugins, 0, env, a);
  return inSpan(env.trace, 'admission', attributes('validating', plugins), async () => runValidating(plugins, 0, env, a));
}

function attributes(phase: string, plugins: readonly { name: string }[]) {
  return { 'admission.phase': phase, 'admission.plugins': plugins.map((p) => p.name) };
}

function runMutating(
  plugins: readonly MutatingPlugin[],
  from: number,
  env: CoreEnv,
  a: AdmissionAttributes,
  object: KObject | undefined,
): KObject | undefined | Promise<KObject | undefined> {
  for (let i = from; i < plugins.length; i++) {
    const out = plugins[i]!.admit(object === a.object ? a : { ...a, object }, env);
    if (out instanceof Promise) {
      const kept = object;
      return out.then((o) => runMutating(plugins, i + 1, env, a, o ?? kept));
    }
    object = out ?? object;
  }
  return object;
}

function runValidating(plugins: readonly ValidatingPlugin[], from: number, env: CoreEnv, a: AdmissionAttributes): Promise<void> | undefined {
  for (let i = from; i < plugins.length; i++) {
    const waits = plugins[i]!.validate(a, env);
    if (waits instanceof Promise) return waits.then(() => runValidating(plugins, i + 1, env, a));
  }
  return undefined;
}
