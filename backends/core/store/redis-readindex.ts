// Consistent reads ("Most Recent"): a read must see every write Redis had
// acknowledged to anyone when the read began. The reader fetches the
// domain's revision from Redis and then waits for the local cache to reach
// it. Concurrent readers share fetches, but only ones issued after they
// arrived: at most one fetch is in flight and one queued behind it.

export class RevisionReader<T = number> {
  private inflight: Promise<T> | undefined;
  private queued: Promise<T> | undefined;

  constructor(private readonly fetch: () => Promise<T>) {}

  read(): Promise<T> {
    if (!this.inflight) return this.start();
    // The fetch in flight may have been answered before this read began: join the next one.
    this.queued ??= this.inflight.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      this.queued = undefined;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<T> {
    const p = this.fetch().finally(() => {
      if (this.inflight === p) this.inflight = undefined;
    });
    this.inflight = p;
    return p;
  }
}
