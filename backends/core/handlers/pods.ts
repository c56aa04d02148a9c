// The core subresources with handlers of their own, by `<plural>/<subresource>`
// (backend.ts asks this table before the generic get, update and patch).
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { bindPod } from './podbinding.js';
import { nodeProxy, podLog, podStream } from './podconnect.js';
import { evictPod } from './podeviction.js';

type Handler = (env: CoreEnv, t: ResourceType, r: BackendRequest) => Promise<void>;

export const CORE_SUBRESOURCES: ReadonlyMap<string, Handler> = new Map<string, Handler>([
  ['pods/binding', bindPod],
  ['pods/eviction', evictPod],
  ['pods/log', podLog],
  ['pods/exec', podStream],
  ['pods/attach', podStream],
  ['pods/portforward', podStream],
  ['nodes/proxy', nodeProxy],
]);
