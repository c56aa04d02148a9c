// watch: a chunked stream of newline-delimited JSON events, of
// length-prefixed WatchEvent frames in protobuf, or of self-delimiting CBOR
// data items (application/cbor-seq, RFC 8742) under CBORServingAndStorage. Starts with the
// synthetic initial state when asked, then every change after the start
// revision; an object leaving the selector arrives as DELETED; a start
// revision that history no longer holds ends in an ERROR event (410).
import { watchEventCounts, watcherRegistered, watcherUnregistered, type WatchEventCounts, type WatcherCount } from '../metrics.js';
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import { expired, internalError, notAcceptable, StatusError, toStatusError, type Status } from '../../../lib/api/status.js';
import { encodeWatchFrame, ProtobufError } from '../../../lib/protobuf/codec.js';
import { encodeCborEvent } from '../../../lib/cbor/encode.js';
import { CBOR_SEQ_MEDIA_TYPE } from '../../../lib/cbor/errors.js';
import type { Output } from '../../../lib/http/negotiate.js';
import { writeHeadWith } from '../../../lib/http/carried.js';
import { chunkSink, type ChunkSink } from '../../../lib/http/chunks.js';
import { goJson } from '../../../lib/api/json.js';
import { apiVersionOf, type ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix } from '../keys.js';
import { parseWatchRequest, type WatchRequest } from '../listoptions.js';
import { convertsOnRead, includeObjectFrom, outputFor, partialMetadata, servedAs, table } from '../render.js';
import { served } from '../conversion.js';
import { listSelected, selectsConverted, servedPair } from '../selection.js';
import { fromStoreError } from '../storeerrors.js';
import { StoreError, type StoreEvent, type Watcher, type WatchSink } from '../store/types.js';
import { addedJsonOfPiece, sharedEvent, type WireType } from '../watchevents.js';

/** A watcher whose socket holds more than this unsent is too slow and is closed (the client re-lists). */
const MAX_BUFFERED = 16 * 1024 * 1024;
/**
 * The initial events of a large collection are written no faster than the client reads them: past this
 * many unsent bytes the writer waits for the socket to drain (kube's cacher blocks the same way), so a
 * watch from 0 on 100,000 objects is never cut as a slow client for the burst it was sent at once.
 */
const INITIAL_HIGH_WATER = 1024 * 1024;

function stamped(obj: KObject, rev: number): KObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rev) } };
}

export async function watchObjects(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const out = outputFor(env, t, r.req.headers.accept);
  if (out.format === 'yaml') throw notAcceptable(['application/json', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/vnd.kubernetes.protobuf']);
  const wr = parseWatchRequest(t, r.query, r.info.name);
  const prefix = listPrefix(t, r.info.namespace);
  const store = env.store;

  let initial: readonly KObject[] = [];
  // JSON of a type served as stored, from a store that kept the items' bytes: the events are made from them.
  let initialPieces: readonly Buffer[] | undefined;
  let startRev: number;
  if (wr.initialEvents) {
    if (wr.minRev !== undefined) await toStatus(() => store.waitForRev(wr.minRev!, env.tooLargeWaitMs), t, wr.minRev);
    const listed = await toStatus(
      () =>
        convertedSelection(env, t, wr)
          ? listSelected(env, t, prefix, wr.selection.identity ? { filter: wr.selection.identity } : {}, wr.selection.content!)
          : store.list(prefix, wr.filter ? { filter: wr.filter, ...(wr.selection.mayMatchJson ? { mayMatchJson: wr.selection.mayMatchJson } : {}) } : {}),
      t,
    );
    if (listed.pieces !== undefined && out.format === 'json' && out.as === undefined && !convertsOnRead(t)) initialPieces = listed.pieces;
    else initial = listed.items;
    startRev = listed.rev;
  } else {
    startRev = wr.fromRev ?? (await toStatus(() => store.currentRev(), t));
  }

  const res = r.res;
  const contentType = out.format === 'protobuf' ? `${out.contentType};stream=watch` : out.format === 'cbor' ? CBOR_SEQ_MEDIA_TYPE : out.contentType;
  // No length: HTTP/1.1 sends it chunked, HTTP/2 as DATA frames (where a Transfer-Encoding header is an error).
  writeHeadWith(r, 200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  const stream = new WatchStream(env, t, r, out, wr);
  await (initialPieces !== undefined ? stream.sendInitialPieces(initialPieces) : stream.sendInitial(initial));
  if (wr.initialEventsEndBookmark) stream.bookmark(startRev, true);

  let watcher: Watcher;
  try {
    watcher = store.watch(prefix, startRev, stream);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'gone') {
      stream.fail(expired(`too old resource version: ${startRev} (${err.currentRev ?? 0})`));
      return;
    }
    stream.fail(fromStoreError(err, { group: t.group, resource: t.plural }, ''));
    return;
  }
  stream.attach(watcher);
  // The initial state is written and the watch follows the store: it no longer holds a seat (kube's watch initialization signal).
  r.watchInitialized?.();
}

function convertedSelection(env: CoreEnv, t: ResourceType, wr: WatchRequest): boolean {
  return wr.selection.content !== undefined && selectsConverted(env, t);
}

async function toStatus<T>(fn: () => Promise<T>, t: ResourceType, rev?: number): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw fromStoreError(err, { group: t.group, resource: t.plural }, '', rev);
  }
}

/** The store's sink itself (no object of closures beside it: an idle watch holds what its stream holds). */
class WatchStream implements WatchSink {
  private watcher: Watcher | undefined;
  private closed = false;
  /** The tail of the queued webhook conversions (events of a webhook-converted type through another version). */
  private pending: Promise<void> | undefined;
  private lastRev = 0;
  // Two fields, not an array: an idle watch holds only these (an array pushed to holds 17 slots).
  private readonly timeout: NodeJS.Timeout;
  private readonly bookmarks: NodeJS.Timeout | undefined;
  private readonly close = () => this.end();
  private readonly registered: WatcherCount;
  /** Selectors read what a conversion may change: evaluated on served objects (selection.ts). */
  private readonly converted: boolean;
  /** The body's writer, chosen once the head is sent (straight to an HTTP/1.1 socket, lib/http/chunks.ts). */
  private readonly sink: ChunkSink;
  private readonly counts: WatchEventCounts;
  /** A Table watch's `includeObject` as sent (read, and refused when unsupported, at each event): the query itself is not kept. */
  private readonly includeObject: string | null;

  constructor(
    private readonly env: CoreEnv,
    private readonly t: ResourceType,
    private readonly r: BackendRequest,
    private readonly out: Output,
    private readonly wr: WatchRequest,
  ) {
    this.converted = convertedSelection(env, t, wr);
    this.includeObject = out.as === 'Table' ? r.query.get('includeObject') : null;
    this.sink = chunkSink(r.req, r.res);
    env.watches.add(this.close);
    this.registered = watcherRegistered(t.group, t.version, t.kind);
    this.counts = watchEventCounts(t.group, t.version, t.plural);
    r.res.on('close', this.close);
    // Spread over [min, 2·min) so that clients cut together do not all come back together.
    const seconds = wr.timeoutSeconds ?? env.minRequestTimeoutS * (1 + Math.random());
    this.timeout = setTimeout(this.close, seconds * 1000);
    this.bookmarks = wr.bookmarks
      ? setInterval(() => {
          void this.periodicBookmark();
        }, env.bookmarkIntervalMs)
      : undefined;
  }

  /** The initial state as ADDED events, waiting for the client to read whenever more than the high-water mark is unsent. */
  async sendInitial(objects: readonly KObject[]): Promise<void> {
    for (const o of objects) {
      if (this.closed) return;
      while (this.sink.buffered() > INITIAL_HIGH_WATER && !this.closed) await this.drained();
      this.send('ADDED', o);
    }
  }

  /** sendInitial of objects kept as their list pieces (JSON output of a type served as stored): nothing parsed. */
  async sendInitialPieces(pieces: readonly Buffer[]): Promise<void> {
    for (const p of pieces) {
      if (this.closed) return;
      while (this.sink.buffered() > INITIAL_HIGH_WATER && !this.closed) await this.drained();
      this.write(addedJsonOfPiece(p));
    }
  }

  /** Resolves when the response or its socket drains, or the stream closes. */
  private drained(): Promise<void> {
    const res = this.r.res;
    const socket = res.socket;
    return new Promise((resolve) => {
      const done = (): void => {
        res.off('drain', done);
        socket?.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.once('drain', done);
      socket?.once('drain', done);
      res.once('close', done);
    });
  }

  attach(w: Watcher): void {
    if (this.closed) w.stop();
    else this.watcher = w;
  }

  /** The store's feed broke: the stream ends with its Status. */
  error(err: StoreError): void {
    this.fail(fromStoreError(err, { group: this.t.group, resource: this.t.plural }, ''));
  }

  event(ev: StoreEvent): void {
    if (this.closed) return;
    const f = this.wr.filter;
    if (!f) {
      this.send(ev.type, ev.object);
      return;
    }
    if (this.converted) {
      // Selectors read the served objects: identity first (no conversion changes it), then both states converted, in order.
      const id = this.wr.selection.identity;
      if (id && !id(ev.object) && (ev.prev === undefined || !id(ev.prev))) return;
      this.then(async () => {
        const [object, prev] = await servedPair(this.env, this.t, ev.object, ev.prev);
        // Already served, and this step is the queue's head: emitted now, never queued behind later events.
        this.transition({ ...ev, object, ...(prev ? { prev } : {}) }, f, (type, obj) => this.emit(type, obj));
      });
      return;
    }
    this.transition(ev, f, (type, obj) => this.send(type, obj));
  }

  /** An event through selectors: ADDED when an object starts matching, DELETED when it stops (kube's watch filtering). */
  private transition(ev: StoreEvent, f: (obj: KObject) => boolean, out: (type: WireType, obj: KObject) => void): void {
    const now = ev.type !== 'DELETED' && f(ev.object);
    const before = ev.prev !== undefined && f(ev.prev);
    if (ev.type === 'DELETED') {
      if (before || f(ev.object)) out('DELETED', ev.object);
    } else if (now && before) out('MODIFIED', ev.object);
    else if (now) out('ADDED', ev.object);
    else if (before) out('DELETED', stamped(ev.prev!, ev.rev));
  }

  send(type: WireType, stored: KObject): void {
    if (this.closed) return;
    if (this.pending || (this.t.conversionWebhook && stored.apiVersion !== apiVersionOf(this.t))) {
      // Converted by the CRD's webhook: one call at a time, so events keep their order.
      this.then(async () => this.emit(type, await served(this.env, this.t, stored)));
      return;
    }
    let obj: KObject;
    try {
      obj = servedAs(this.t, stored);
    } catch (err) {
      // An object this version cannot be served: the stream ends with the error, as kube's.
      this.fail(toStatusError(err));
      return;
    }
    this.emit(type, obj);
  }

  /** Runs `step` after the conversions queued before it; a failure ends the stream with its Status (kube's watch of an unconvertible object). */
  private then(step: () => Promise<void>): void {
    const p = (this.pending ?? Promise.resolve()).then(() => (this.closed ? undefined : step())).catch((err: unknown) => this.fail(toStatusError(err)));
    this.pending = p;
    void p.then(() => {
      if (this.pending === p) this.pending = undefined;
    });
  }

  private emit(type: WireType, obj: KObject): void {
    if (this.closed) return;
    const rev = Number(obj.metadata.resourceVersion);
    if (rev > this.lastRev) this.lastRev = rev;
    if (this.out.format === 'protobuf')
      this.writeFrame(type, () => (this.out.as ? encodeWatchFrame(type, partialMetadata(obj, 'v1')) : sharedEvent('protobuf', type, obj)));
    else if (this.out.format === 'cbor') this.write(this.out.as ? encodeCborEvent(type, partialMetadata(obj, 'v1')) : sharedEvent('cbor', type, obj));
    else this.write(this.out.as === 'Table' ? this.tableLine(type, obj) : sharedEvent('json', type, obj));
  }

  /** A protobuf frame; an object the schema cannot hold ends the stream with an ERROR event, never a crash. */
  private writeFrame(type: WireType, encode: () => Buffer): void {
    let frame: Buffer;
    try {
      frame = encode();
    } catch (err) {
      if (!(err instanceof ProtobufError) || type === 'ERROR') throw err;
      this.fail(internalError(`cannot encode the ${type} event as protobuf: ${err.message}`));
      return;
    }
    this.write(frame);
  }

  bookmark(rev: number, initialEventsEnd = false): void {
    if (this.closed) return;
    if (this.pending) {
      // After the events still being converted: a bookmark never overtakes them.
      this.then(async () => this.writeBookmark(rev, initialEventsEnd));
      return;
    }
    this.writeBookmark(rev, initialEventsEnd);
  }

  private writeBookmark(rev: number, initialEventsEnd: boolean): void {
    if (this.closed) return;
    if (rev > this.lastRev) this.lastRev = rev;
    const metadata: Record<string, unknown> = { resourceVersion: String(rev) };
    if (initialEventsEnd) metadata['annotations'] = { 'k8s.io/initial-events-end': 'true' };
    const obj = { kind: this.t.kind, apiVersion: apiVersionOf(this.t), metadata } as KObject;
    if (this.out.format === 'protobuf') {
      const shaped = this.out.as ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata } : obj;
      this.writeFrame('BOOKMARK', () => encodeWatchFrame('BOOKMARK', shaped));
      return;
    }
    if (this.out.format === 'cbor') {
      this.write(encodeCborEvent('BOOKMARK', this.out.as ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata } : obj));
      return;
    }
    this.write(
      this.out.as === 'Table'
        ? goJson({
            type: 'BOOKMARK',
            object: { kind: 'Table', apiVersion: `meta.k8s.io/${this.out.asVersion ?? 'v1'}`, metadata, columnDefinitions: null, rows: null },
          }) + '\n'
        : goJson({ type: 'BOOKMARK', object: obj }) + '\n',
    );
  }

  private async periodicBookmark(): Promise<void> {
    // Until the store's watcher is attached the initial state is still being written (as the client reads it):
    // no revision has been delivered whole yet, and kube sends no bookmark before the initial events end.
    if (this.watcher === undefined) return;
    try {
      // Every event up to the store's current revision has been delivered to this watcher.
      const rev = await this.env.store.currentRev();
      this.bookmark(Math.max(rev, this.lastRev));
    } catch {
      // The store is unreachable; its watch feed reports that itself.
    }
  }

  fail(err: unknown): void {
    const status: Status =
      err instanceof StatusError
        ? err.status
        : {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: 'watch ended by an internal error',
            reason: 'InternalError',
            code: 500,
          };
    if (!(err instanceof StatusError)) this.env.log(`watch failed: ${err instanceof Error ? err.message : String(err)}`);
    if (this.out.format === 'protobuf') this.writeFrame('ERROR', () => encodeWatchFrame('ERROR', status as unknown as Record<string, unknown>));
    else if (this.out.format === 'cbor') this.write(encodeCborEvent('ERROR', status));
    else this.write(goJson({ type: 'ERROR', object: status }) + '\n');
    this.end();
  }

  private tableLine(type: WireType, obj: KObject): string {
    const tbl = table(
      this.t,
      [obj],
      { resourceVersion: obj.metadata.resourceVersion ?? '' },
      this.out.asVersion ?? 'v1',
      includeObjectFrom(this.includeObject),
      this.env.clock(),
    );
    return goJson({ type, object: tbl }) + '\n';
  }

  private write(line: string | Buffer): void {
    if (this.closed) return;
    if (this.sink.buffered() > MAX_BUFFERED) {
      this.env.log(`closing a watch of ${this.t.plural}: the client reads too slowly`);
      this.end();
      return;
    }
    this.sink.write(line);
    // Every frame written is one event (bookmarks and the closing ERROR too, as kube counts them).
    this.counts.events.value++;
    this.counts.sizes.observe(typeof line === 'string' ? Buffer.byteLength(line) : line.length);
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.watcher?.stop();
    clearTimeout(this.timeout);
    if (this.bookmarks !== undefined) clearInterval(this.bookmarks);
    this.env.watches.delete(this.close);
    watcherUnregistered(this.registered);
    if (!this.r.res.writableEnded) this.r.res.end();
  }
}
