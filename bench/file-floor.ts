// The floor of the file store's create (bench/store-paths.ts prints it beside
// the file store's windows, bench/run.ts's CREATE section beside its volatile
// twin, below): a bare node:https server, with Gatehouse's TLS
// settings, that does only what any durable create must: read and parse the
// JSON body, stamp it (a revision), serialize it into a CRC-framed line of the
// file store's record size (RECORD_BYTES, measured on the file store's own log
// in the same run), append it to a log opened O_DSYNC (the store's
// LogAppender) group-committed by the store's rule (strictly sequential
// batches, the next cut one event-loop turn after the previous sync returned),
// and answer 201 once its batch is durable. No authentication, admission,
// validation, watch cache or visible state: what the file store adds to a
// create's latency over the disk's own is the gap between this row and its.
//
// Every append's wall time is kept: the `syncs` command returns their
// distribution (the disk's fsync latency under the window's load) and the
// mean batch, and starts a new count.
//
// FLOOR_DURABLE=0 makes it the volatile twin (bench/run.ts's CREATE section runs
// both): every step above the same — parse, stamp, the CRC line, the queue, the
// batch cut by the same rule and concatenated — but no append: a batch is
// answered once its records are built. The durable floor's CPU per create less
// the volatile one's is what the O_DSYNC append itself adds (the system call and
// the sync in the thread pool, the event loop waiting and waking for it).
//
// argv: port cert key ca log-path; env RECORD_BYTES (default 700), FLOOR_CUT: when
// the next batch is cut after a sync returned — `turn` (the store's rule, default),
// `now` (at once, in the sync's own callback) or `<n>ms` (a timer), to tune the rule;
// FLOOR_DURABLE (default 1; 0: the volatile twin, no log opened).
import { crc32 } from 'node:zlib';
import { LogAppender } from '../backends/core/store/file-append.js';
import { serveCommands } from './procs.js';
import { readBody } from './body.js';
import { baselineServer } from './rig.js';

const [port, certFile, keyFile, caFile, logPath] = process.argv.slice(2);
const RECORD_BYTES = Number(process.env['RECORD_BYTES'] ?? 700);
const DURABLE = process.env['FLOOR_DURABLE'] !== '0';
const log = DURABLE ? await LogAppender.open(logPath!) : undefined;
const CUT = process.env['FLOOR_CUT'] ?? 'turn';
const cutWaitMs = CUT.endsWith('ms') ? Number(CUT.slice(0, -2)) : undefined;

function cut(): Promise<void> | undefined {
  if (CUT === 'now') return undefined;
  if (cutWaitMs !== undefined) return new Promise<void>((r) => setTimeout(r, cutWaitMs));
  return new Promise<void>((r) => setImmediate(r));
}

interface Waiting {
  line: Buffer;
  done(): void;
}
let queue: Waiting[] = [];
let running = false;
let rev = 0;
let offset = 0;
/** Wall ms of each append since the last `syncs`, and the records they carried. */
let walls: number[] = [];
let records = 0;

async function run(): Promise<void> {
  running = true;
  while (queue.length > 0) {
    await cut();
    const batch = queue;
    queue = [];
    const buf = Buffer.concat(batch.map((w) => w.line));
    if (log) {
      const t0 = performance.now();
      await log.append(buf, batch.length);
      walls.push(performance.now() - t0);
    }
    records += batch.length;
    offset += buf.length;
    for (const w of batch) w.done();
  }
  running = false;
}

/**
 * A record line of RECORD_BYTES: `<crc32 hex8> {"r","b","t","k","o":<the answer's JSON>,"p":<filler>}\n`, the
 * store's head fields and format, the object serialized once (the answer's text, as the store remembers it).
 */
function record(key: string, json: string): Buffer {
  const head = `{"r":${++rev},"b":${offset},"t":${Date.now()},"k":${JSON.stringify(key)},"o":${json},"p":"`;
  const fill = Math.max(0, RECORD_BYTES - 9 - Buffer.byteLength(head) - 3);
  const line = Buffer.from(`00000000 ${head}${'x'.repeat(fill)}"}\n`);
  line.write(
    crc32(line.subarray(9, line.length - 1))
      .toString(16)
      .padStart(8, '0'),
    0,
    'latin1',
  );
  return line;
}

const server = baselineServer(certFile!, keyFile!, caFile!, (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(404).end();
    return;
  }
  void readBody(req).then((text) => {
    const obj = JSON.parse(text) as { metadata: Record<string, unknown> };
    obj.metadata['resourceVersion'] = String(rev + 1);
    const json = JSON.stringify(obj);
    queue.push({
      line: record(`${req.url}/${String(obj.metadata['name'])}`, json),
      done: () => res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) }).end(json),
    });
    if (!running) void run();
  });
});

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

server.listen(Number(port), '127.0.0.1', () => {
  serveCommands({
    syncs: () => {
      const w = walls.sort((a, b) => a - b);
      const figures = { syncs: w.length, records, p50: quantile(w, 0.5), p90: quantile(w, 0.9), p99: quantile(w, 0.99), max: w[w.length - 1] ?? NaN };
      walls = [];
      records = 0;
      return figures;
    },
  });
});
