// Keeps the node graph current from pods and persistent volumes through an
// ObjectSource (lib/api/reflector.ts: list, then watch; a broken watch is
// followed by a fresh list after a short pause, as client-go's reflector does).
import type { ObjectSource } from '../../../lib/api/objectsource.js';
import { Reflector } from '../../../lib/api/reflector.js';
import type { NodeGraph } from './graph.js';

export interface PopulatorOptions {
  readonly log: (msg: string) => void;
}

export class GraphPopulator {
  private readonly reflector: Reflector;

  constructor(source: ObjectSource, graph: NodeGraph, opts: PopulatorOptions) {
    this.reflector = new Reflector(
      source,
      [
        {
          group: '',
          resource: 'pods',
          reset: (items) => graph.resetPods(items),
          set: (o) => graph.setPod(o),
          remove: (o) => graph.deletePod(o.metadata.namespace ?? '', o.metadata.name ?? ''),
        },
        {
          group: '',
          resource: 'persistentvolumes',
          reset: (items) => graph.resetPvs(items),
          set: (o) => graph.setPv(o),
          remove: (o) => graph.deletePv(o.metadata.name ?? ''),
        },
      ],
      { who: 'node authorizer', log: opts.log },
    );
  }

  /** Lists everything once (the graph is complete when this resolves), then follows changes. */
  start(): Promise<void> {
    return this.reflector.start();
  }

  stop(): void {
    this.reflector.stop();
  }
}
