// Keeps the node graph current: list pods and persistent volumes, then watch
// from the listed revision; a watch that ends (410, store trouble) is
// followed by a fresh list after a short pause, as client-go's reflector does.
import type { ObjectEvent, ObjectSource, ObjectWatch } from '../../../lib/api/objectsource.js';
import type { KObject } from '../../../lib/api/meta.js';
import type { NodeGraph } from './graph.js';

interface Feed {
  readonly resource: string;
  reset(items: readonly KObject[]): void;
  set(obj: KObject): void;
  remove(obj: KObject): void;
}

export interface PopulatorOptions {
  readonly log: (msg: string) => void;
  readonly retryMs?: number;
}

export class GraphPopulator {
  private readonly watches = new Map<string, ObjectWatch>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private readonly feeds: readonly Feed[];

  constructor(private readonly source: ObjectSource, graph: NodeGraph, private readonly opts: PopulatorOptions) {
    this.feeds = [
      {
        resource: 'pods', reset: (items) => graph.resetPods(items), set: (o) => graph.setPod(o),
        remove: (o) => graph.deletePod(o.metadata.namespace ?? '', o.metadata.name ?? ''),
      },
      { resource: 'persistentvolumes', reset: (items) => graph.resetPvs(items), set: (o) => graph.setPv(o), remove: (o) => graph.deletePv(o.metadata.name ?? '') },
    ];
  }

  /** Lists everything once (the graph is complete when this resolves), then follows changes. */
  async start(): Promise<void> {
    await Promise.all(this.feeds.map((f) => this.sync(f)));
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches.values()) w.stop();
    this.watches.clear();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private async sync(feed: Feed): Promise<void> {
    if (this.stopped) return;
    const { items, resourceVersion } = await this.source.list('', feed.resource);
    if (this.stopped) return;
    feed.reset(items);
    const onEvent = (ev: ObjectEvent) => {
      if (ev.type === 'DELETED') feed.remove(ev.object);
      else feed.set(ev.object);
    };
    const onError = (err: Error) => {
      this.watches.get(feed.resource)?.stop();
      this.watches.delete(feed.resource);
      if (this.stopped) return;
      this.opts.log(`node authorizer: watch of ${feed.resource} ended, listing again: ${err.message}`);
      this.retry(feed);
    };
    this.watches.set(feed.resource, this.source.watch('', feed.resource, resourceVersion, onEvent, onError));
  }

  private retry(feed: Feed): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.sync(feed).catch((err: unknown) => {
        this.opts.log(`node authorizer: listing ${feed.resource} failed, retrying: ${err instanceof Error ? err.message : String(err)}`);
        this.retry(feed);
      });
    }, this.opts.retryMs ?? 1000);
    t.unref();
    this.timers.add(t);
  }
}
