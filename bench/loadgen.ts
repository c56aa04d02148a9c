// The load generator process: runs the measurements the orchestrator asks
// for over IPC and answers with raw figures (no printing here).
import type { TLSSocket } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { closedLoop, openTls, type CpuShare, type LoopResult, type Request, type Target } from './rawclient.js';
import { Samples, type Percentiles } from './stats.js';
import { serveCommands } from './procs.js';

interface LoopArgs {
  target: Target;
  connections: number;
  warmupMs: number;
  durationMs: number;
  maxRequests: number;
}

let posts = 0;

/**
 * One fixed request over and over; `units` counts responses. A POST body gets
 * a fresh metadata.name each time when uniqueNames (in scattered key order); a PUT body a fresh
 * data.seq when changingData (an unchanged PUT writes nothing), and with `{n}`
 * in its path goes to each of `objects` objects in turn (no two writers on one).
 */
function fixedLoop(a: LoopArgs & { req: Request; uniqueNames?: boolean; changingData?: boolean; objects?: number }): Promise<LoopResult> {
  if (!(a.uniqueNames || a.changingData) || a.req.body === undefined) return closedLoop(a, { next: () => a.req, done: () => 1 });
  const obj = JSON.parse(a.req.body) as { metadata: Record<string, unknown>; data?: Record<string, unknown> };
  const run = ++posts;
  let n = 0;
  if (a.uniqueNames) {
    // Names in scattered order, as generateName's random suffixes land: each create goes to a
    // random place in the type's key order, not after the previous one (n ↦ n·2654435761 mod 2³²
    // is one-to-one, so names stay distinct).
    return closedLoop(a, {
      next: () => ({
        ...a.req,
        body: JSON.stringify({ ...obj, metadata: { ...obj.metadata, name: `c${(Math.imul(n++, 2654435761) >>> 0).toString(36)}-${run}` } }),
      }),
      done: () => 1,
    });
  }
  // `{n}` in the path: successive requests go to successive objects (of `objects`), four-digit numbered.
  const objects = a.objects ?? 1;
  return closedLoop(a, {
    next: () => {
      const i = String(n % objects).padStart(4, '0');
      const path = a.req.path.replace('{n}', i);
      const name = path.slice(path.lastIndexOf('/') + 1);
      return { ...a.req, path, body: JSON.stringify({ ...obj, metadata: { ...obj.metadata, name }, data: { ...obj.data, seq: `${run}-${n++}` } }) };
    },
    done: () => 1,
  });
}

/**
 * Paged LIST: each connection walks the collection with limit/continue and
 * starts over after the last page; units = objects received.
 */
function pagedLoop(a: LoopArgs & { path: string; limit: number; total: number }): Promise<LoopResult> {
  const cont: (string | undefined)[] = new Array(a.connections).fill(undefined);
  const seen: number[] = new Array(a.connections).fill(0);
  const sep = a.path.includes('?') ? '&' : '?';
  const first: Request = { method: 'GET', path: a.limit > 0 ? `${a.path}${sep}limit=${a.limit}` : a.path };
  return closedLoop(a, {
    wantBody: true,
    next: (i) => {
      const c = cont[i];
      return c === undefined ? first : { method: 'GET', path: `${first.path}&continue=${encodeURIComponent(c)}` };
    },
    done: (i, status, body) => {
      if (status !== 200 || !body) {
        cont[i] = undefined;
        seen[i] = 0;
        return 0;
      }
      const head = body.toString('latin1', 0, Math.min(body.length, 2048));
      const m = /"continue":"([^"]*)"/.exec(head);
      const items = m ? a.limit : a.total - seen[i]!;
      cont[i] = m ? m[1] : undefined;
      seen[i] = m ? seen[i]! + items : 0;
      return items;
    },
  });
}

// ---- watch ----

let watches: TLSSocket[] = [];
/** Arrivals of the current run: (seq, time) pairs. */
let arrivalSeq = new Float64Array(1 << 16);
let arrivalAt = new Float64Array(1 << 16);
let arrivals = 0;
let marker = '"name":"w0-';

function record(seq: number, at: number): void {
  if (arrivals === arrivalSeq.length) {
    const s = new Float64Array(arrivals * 2);
    s.set(arrivalSeq);
    arrivalSeq = s;
    const t = new Float64Array(arrivals * 2);
    t.set(arrivalAt);
    arrivalAt = t;
  }
  arrivalSeq[arrivals] = seq;
  arrivalAt[arrivals++] = at;
}

/**
 * Watch streams are read raw (chunk framing included): each event carries
 * `"name":"w<run>-<seq>"` exactly once, so finding that marker is enough,
 * and costs the client far less than an HTTP parser per event.
 */
function onWatchData(state: { rest: string }, chunk: Buffer): void {
  const at = performance.now();
  const text = state.rest + chunk.toString('latin1');
  let pos = 0;
  for (;;) {
    const i = text.indexOf(marker, pos);
    if (i < 0) break;
    const q = text.indexOf('"', i + marker.length);
    if (q < 0) {
      state.rest = text.slice(i);
      return;
    }
    record(parseInt(text.slice(i + marker.length, q), 10), at);
    pos = q + 1;
  }
  state.rest = text.slice(Math.max(pos, text.length - marker.length));
}

async function openOne(t: Target, path: string): Promise<TLSSocket> {
  const socket = await openTls(t);
  return new Promise((resolve, reject) => {
    let head = '';
    const onHead = (c: Buffer): void => {
      head += c.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onHead);
      if (!head.startsWith('HTTP/1.1 200')) {
        socket.destroy();
        reject(new Error(`watch ${path}: ${head.split('\r\n')[0]}`));
        return;
      }
      const state = { rest: '' };
      socket.on('data', (d: Buffer) => onWatchData(state, d));
      if (head.length > end + 4) onWatchData(state, Buffer.from(head.slice(end + 4), 'latin1'));
      resolve(socket);
    };
    socket.on('data', onHead);
    socket.on('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\nAccept: application/json\r\nUser-Agent: gatehouse-bench\r\n\r\n`);
  });
}

async function watchOpen(a: { target: Target; n: number; path: string }): Promise<{ opened: number; ms: number }> {
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < a.n) {
      next++;
      watches.push(await openOne(a.target, a.path));
    }
  };
  await Promise.all(Array.from({ length: Math.min(64, a.n) }, worker));
  return { opened: watches.length, ms: performance.now() - t0 };
}

function watchClose(): number {
  const n = watches.length;
  for (const w of watches) w.destroy();
  watches = [];
  return n;
}

export interface WatchRunResult {
  watchers: number;
  writes: number;
  writesPerSec: number;
  events: number;
  eventsPerSec: number;
  missing: number;
  fromAck: Percentiles;
  fromSend: Percentiles;
  seconds: number;
  cpu?: CpuShare;
}

let runs = 0;

/** Writers create objects named w<run>-<seq> as fast as `concurrency` allows; every watcher should see each one. */
async function watchRun(a: LoopArgs & { path: string; body: Record<string, unknown>; drainMs: number }): Promise<WatchRunResult> {
  const prefix = `w${++runs}-`;
  marker = `"name":"${prefix}`;
  arrivals = 0;
  const n = watches.length;
  const sentAt: number[] = [];
  const ackAt: number[] = [];
  const current: number[] = [];
  const meta = a.body['metadata'] as Record<string, unknown>;
  let seq = 0;
  const loop = await closedLoop(a, {
    next: (i) => {
      const s = seq++;
      current[i] = s;
      sentAt[s] = performance.now();
      return { method: 'POST', path: a.path, body: JSON.stringify({ ...a.body, metadata: { ...meta, name: `${prefix}${s}` } }) };
    },
    done: (i, status, _b, _s, doneAt) => {
      if (status < 300) ackAt[current[i]!] = doneAt;
    },
  });
  const { from, until } = loop;
  // Wait for the fan-out of every acknowledged write to arrive (bounded).
  let acked = 0;
  for (const t of ackAt) if (t !== undefined) acked++;
  const drainUntil = performance.now() + a.drainMs;
  while (arrivals < acked * n && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 20));

  const fromAck = new Samples();
  const fromSend = new Samples();
  let inWindow = 0,
    expected = 0,
    got = 0;
  for (let i = 0; i < arrivals; i++) {
    const at = arrivalAt[i]!;
    if (at >= from && at <= until) inWindow++;
    const s = arrivalSeq[i]!;
    const ack = ackAt[s];
    if (ack === undefined || ack < from || ack > until) continue;
    got++;
    fromAck.add(Math.max(0, at - ack));
    fromSend.add(at - sentAt[s]!);
  }
  let writes = 0;
  for (const t of ackAt) if (t !== undefined && t >= from && t <= until) writes++;
  expected = writes * n;
  const seconds = a.durationMs / 1000;
  return {
    watchers: n,
    writes,
    writesPerSec: writes / seconds,
    events: inWindow,
    eventsPerSec: inWindow / seconds,
    missing: Math.max(0, expected - got),
    fromAck: fromAck.summary(),
    fromSend: fromSend.summary(),
    seconds: loop.seconds,
  };
}

serveCommands({
  fixed: fixedLoop,
  paged: pagedLoop,
  watchOpen,
  watchRun,
  watchClose,
});
