// A recorded request's view of the core backend's env: the same env, with a
// store whose calls are spans under the request (store/traced.ts) and the
// request's trace for the calls that leave the process (conversion
// webhooks). Made only for a recorded request: every other request, and the
// controllers, use the env itself and pay nothing for tracing.
import type { CoreEnv } from './env.js';
import { TracedStore } from './store/traced.js';
import type { Trace } from '../../lib/tracing/span.js';

export function tracedEnv(env: CoreEnv, trace: Trace, storeKind: string): CoreEnv {
  // The env's getters (registry, conversion) and shared state (watches) stay the env's own, by prototype.
  return Object.create(env, {
    store: { value: new TracedStore(env.store, storeKind, trace), enumerable: true },
    trace: { value: trace, enumerable: true },
  }) as CoreEnv;
}
