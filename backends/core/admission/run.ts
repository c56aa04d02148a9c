// Runs the two admission phases of one write with the backend's plugins in
// force; a recorded request gets one `admission` span per phase that has
// plugins (attribute `admission.plugins`), under the request's span.
import type { KObject } from '../../../lib/api/meta.js';
import { inSpan } from '../../../lib/tracing/span.js';
import type { CoreEnv } from '../env.js';
import { BUILTIN_ADMISSION } from './build.js';
import type { AdmissionAttributes, MutatingPlugin, ValidatingPlugin } from './types.js';

/** The object after the mutating plugins (the same object when none changed it). */
export function mutate(env: CoreEnv, a: AdmissionAttributes): Promise<KObject | undefined> {
  const plugins = (env.admission ?? BUILTIN_ADMISSION).mutating;
  if (plugins.length === 0) return Promise.resolve(a.object);
  if (!env.trace) return runMutating(plugins, env, a);
  return inSpan(env.trace, 'admission', attributes('mutating', plugins), () => runMutating(plugins, env, a));
}

/** Throws the first refusal of a validating plugin. */
export function validate(env: CoreEnv, a: AdmissionAttributes): Promise<void> {
  const plugins = (env.admission ?? BUILTIN_ADMISSION).validating;
  if (plugins.length === 0) return Promise.resolve();
  if (!env.trace) return runValidating(plugins, env, a);
  return inSpan(env.trace, 'admission', attributes('validating', plugins), () => runValidating(plugins, env, a));
}

function attributes(phase: string, plugins: readonly { name: string }[]) {
  return { 'admission.phase': phase, 'admission.plugins': plugins.map((p) => p.name) };
}

async function runMutating(plugins: readonly MutatingPlugin[], env: CoreEnv, a: AdmissionAttributes): Promise<KObject | undefined> {
  let object = a.object;
  for (const p of plugins) object = (await p.admit(object === a.object ? a : { ...a, object }, env)) ?? object;
  return object;
}

async function runValidating(plugins: readonly ValidatingPlugin[], env: CoreEnv, a: AdmissionAttributes): Promise<void> {
  for (const p of plugins) await p.validate(a, env);
}
