// The Node authorizer and its graph, built once per server from the core
// backend's objects.
import type { ObjectSource } from '../../../lib/api/objectsource.js';
import { NodeAuthorizer } from './authorizer.js';
import { NodeGraph } from './graph.js';
import { GraphPopulator } from './populator.js';

export { NodeAuthorizer } from './authorizer.js';
export { NodeGraph } from './graph.js';
export { nodeIdentity, NODES_GROUP, NODE_USER_PREFIX } from '../../../lib/node/identity.js';

export interface NodeAuthorization {
  readonly authorizer: NodeAuthorizer;
  readonly graph: NodeGraph;
  close(): void;
}

/** Lists pods and volumes once (resolves when the graph is complete), then follows their watches. */
export async function startNodeAuthorization(objects: ObjectSource, opts: { withSelectors: boolean; log: (msg: string) => void }): Promise<NodeAuthorization> {
  const graph = new NodeGraph();
  const populator = new GraphPopulator(objects, graph, { log: opts.log });
  await populator.start();
  return { authorizer: new NodeAuthorizer(graph, { withSelectors: opts.withSelectors }), graph, close: () => populator.stop() };
}
