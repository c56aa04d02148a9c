// --audit-log-path: one event per line to a file or to stdout (`-`), as JSON
// (--audit-log-format=json) or kube's legacy text (legacy.ts). Kube writes each
// event at once, in its request's goroutine; here one thread serves every
// request, and a write per event (a system call, ~8 µs on a VM) was the largest
// part of a Metadata-audited GET's audit cost. So lines are gathered: an event
// a request waits for (a blocking mode's RequestReceived) goes out at the end of
// the event-loop turn, the others within COALESCE_MS or once COALESCE_BYTES are
// waiting; one write is in flight at a time, off the event loop (the thread
// pool's write), and what comes meanwhile goes in the next. What is gathered is
// written synchronously when the process exits (an uncaught error included) and
// at shutdown; only a process killed outright (SIGKILL, out of memory) loses
// the last COALESCE_MS of events whose answers were sent — as kube's log, which
// is not synced, loses what the page cache held when the machine stops.
// `process` resolves once the event's write is done. With
// --audit-log-maxsize/-maxbackup/-maxage, rotation as lumberjack (which kube
// uses) does it: the file is renamed `<name>-<UTC time>.<ext>` when the next
// write would pass maxsize MB (100 when only the others are set), then old
// copies beyond maxbackup or older than maxage days are removed; with
// --audit-log-compress a rotated copy is gzipped (`….log.gz`) in the
// background, as lumberjack's Compress. With --audit-log-truncate-enabled,
// events pass through the truncate plugin first (truncate.ts).
import { closeSync, createReadStream, createWriteStream, openSync, readdirSync, renameSync, statSync, unlinkSync, write, writeSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { AuditBackend } from './backend.js';
import { eventJson, type AuditEvent } from './event.js';
import { legacyLine } from './legacy.js';
import type { Truncator } from './truncate.js';
import { atExitWrite } from './exit.js';

export interface LogRotation {
  maxAgeDays: number;
  maxBackups: number;
  maxSizeMB: number;
  /** Gzip rotated copies. */
  compress?: boolean;
}

export interface LogFormat {
  format?: 'json' | 'legacy';
  truncate?: Truncator;
}

const MB = 1024 * 1024;
/** How long an event nobody waits for may be held to share a write, and how much is written without waiting. */
export const COALESCE_MS = 5;
const COALESCE_BYTES = 256 * 1024;
/** Room for what COALESCE_BYTES triggers and the lines of the turn that passed it. */
const INITIAL_BYTES = 512 * 1024;

export class LogBackend implements AuditBackend {
  readonly plugin = 'log';
  private fd: number | undefined;
  private size = 0;
  /**
   * Lines not yet handed to a write, as bytes (`pendingBytes` of `buf`), and the
   * promise their events were given. Each line is encoded into the buffer as it
   * comes: held as one string until the write, the lines of a few milliseconds
   * lived long enough to be promoted by the garbage collector, and the write
   * flattened their rope on the event loop (the largest parts of the log's
   * cost in a CPU profile of Metadata-audited GETs).
   */
  private buf: Buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  /** The other buffer: the one being written, free again when its write is done. */
  private spare: Buffer | undefined = Buffer.allocUnsafe(INITIAL_BYTES);
  private pendingBytes = 0;
  private next: Deferred | undefined;
  private scheduled = false;
  /** What is pending holds an event someone waits for. */
  private urgent = false;
  private timer: NodeJS.Timeout | undefined;
  /** The write in flight (settles, never rejects, when it is done). */
  private writing: Promise<void> | undefined;
  private closed = false;
  private readonly maxBytes: number;
  /** Compressions and pruning after them, in rotation order (--audit-log-compress). */
  private mill: Promise<void> = Promise.resolve();
  private readonly lines: (events: readonly AuditEvent[]) => string;
  private readonly unregisterExit: () => void;

  constructor(
    private readonly path: string,
    private readonly rotation: LogRotation,
    private readonly clock: () => number = Date.now,
    format: LogFormat = {},
  ) {
    const rotate = rotation.maxAgeDays > 0 || rotation.maxBackups > 0 || rotation.maxSizeMB > 0;
    this.maxBytes = rotate ? (rotation.maxSizeMB || 100) * MB : Infinity;
    this.lines = linesOf(format);
    if (path !== '-') this.open();
    this.unregisterExit = atExitWrite(this.onExit);
  }

  /**
   * Resolves when the events' lines are written, rejects when the write failed.
   * `awaited`: the caller waits for it (a blocking mode's RequestReceived), so
   * it is not held back to share a write.
   */
  process(events: readonly AuditEvent[], awaited = false): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the audit log is closed'));
    this.append(this.lines(events));
    const next = (this.next ??= deferred());
    if (awaited) this.urgent = true;
    if (this.writing === undefined) this.schedule(); // else the write in flight schedules the next when it is done
    return next.promise;
  }

  /** The next write: at the end of this turn when someone waits for it or much is gathered, else within COALESCE_MS. */
  private schedule(): void {
    if (this.urgent || this.pendingBytes >= COALESCE_BYTES) {
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.kick);
      }
    } else {
      this.timer ??= setTimeout(this.kick, COALESCE_MS);
    }
  }

  private readonly kick = (): void => {
    this.scheduled = false;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.writeOut();
  };

  /** The process is ending (an uncaught error, process.exit; called by the audit's one exit listener, exit.ts): what is gathered is written now. */
  readonly onExit = (): void => {
    const fd = this.path === '-' ? 1 : this.fd;
    if (this.pendingBytes === 0 || fd === undefined) return;
    try {
      writeSync(fd, this.buf, 0, this.pendingBytes);
    } catch {
      /* nothing more can be done while exiting */
    }
    this.pendingBytes = 0;
  };

  /** Encodes lines at the end of what is pending, growing the buffer when they may not fit. */
  private append(text: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: room for that many needs no byteLength pass first.
    const most = text.length * 3;
    if (this.pendingBytes + most > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pendingBytes + most));
      this.buf.copy(bigger, 0, 0, this.pendingBytes);
      this.buf = bigger;
    }
    this.pendingBytes += this.buf.write(text, this.pendingBytes, 'utf8');
  }

  /** Hands what is pending to one write. */
  private writeOut(): void {
    if (this.writing !== undefined || this.pendingBytes === 0) return;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.urgent = false;
    const written = this.buf;
    const bytes = this.buf.subarray(0, this.pendingBytes);
    const done = this.next!;
    // The lines that come while this write is in flight go to the other buffer.
    this.buf = this.spare ?? Buffer.allocUnsafe(INITIAL_BYTES);
    this.spare = undefined;
    this.pendingBytes = 0;
    this.next = undefined;
    this.writing = done.promise.then(noop, noop);
    const finish = (err?: Error | null): void => {
      this.writing = undefined;
      // Kept for the next write unless it grew for a burst of large events.
      if (written.length <= INITIAL_BYTES * 4) this.spare = written;
      if (err) done.reject(err);
      else done.resolve();
      if (this.pendingBytes !== 0) this.schedule();
    };
    if (this.path === '-') {
      process.stdout.write(bytes, finish);
      return;
    }
    try {
      if (this.size > 0 && this.size + bytes.length > this.maxBytes) this.rotate();
    } catch (err) {
      finish(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.size += bytes.length;
    writeAll(this.fd!, bytes, finish);
  }

  private open(): void {
    this.fd = openSync(this.path, 'a', 0o600);
    this.size = statSync(this.path).size;
  }

  private rotate(): void {
    closeSync(this.fd!);
    const ext = extname(this.path);
    const stem = basename(this.path, ext);
    const stamp = new Date(this.clock()).toISOString().slice(0, 23).replace(/:/g, '-');
    const rotated = join(dirname(this.path), `${stem}-${stamp}${ext}`);
    renameSync(this.path, rotated);
    this.open();
    if (!this.rotation.compress) {
      this.prune(stem, ext);
      return;
    }
    // As lumberjack's mill: one copy at a time is compressed, then old copies are removed, so a
    // copy is never removed while it is being read.
    this.mill = this.mill
      .then(() => gzipAway(rotated).catch(() => undefined))
      .then(() => {
        try {
          this.prune(stem, ext);
        } catch {
          /* the directory went away: nothing to prune */
        }
      });
  }

  /** Removes backups beyond maxbackup (oldest first) and older than maxage days. */
  private prune(stem: string, ext: string): void {
    const dir = dirname(this.path);
    const re = new RegExp(`^${escape(stem)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})${escape(ext)}(?:\\.gz)?$`);
    const backups = readdirSync(dir)
      .flatMap((f) => {
        const m = re.exec(f);
        if (!m) return [];
        const t = Date.parse(`${m[1]!.slice(0, 10)}T${m[1]!.slice(11).replace(/-/g, ':')}Z`);
        return [{ f, t }];
      })
      .sort((a, b) => b.t - a.t);
    const cutoff = this.rotation.maxAgeDays > 0 ? this.clock() - this.rotation.maxAgeDays * 86_400_000 : -Infinity;
    // A copy caught between its .gz being written and its .log removed is there twice: one backup.
    const rank = new Map<number, number>();
    for (const b of backups) if (!rank.has(b.t)) rank.set(b.t, rank.size);
    backups.forEach((b) => {
      if ((this.rotation.maxBackups > 0 && rank.get(b.t)! >= this.rotation.maxBackups) || b.t < cutoff) {
        try {
          unlinkSync(join(dir, b.f));
        } catch {
          /* already gone */
        }
      }
    });
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    // What was handed over before shutdown is written: the write in flight, then what came meanwhile.
    while (this.writing !== undefined || this.pendingBytes !== 0) {
      this.writeOut();
      await this.writing;
    }
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
    this.unregisterExit();
    await this.mill;
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

function noop(): void {}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((y, n) => {
    resolve = y;
    reject = n;
  });
  // A failed write is reported through the promise given to each caller; this one is only kept.
  promise.catch(noop);
  return { promise, resolve, reject };
}

/** Writes the whole buffer at the file's end (a write may take part of it). */
function writeAll(fd: number, buf: Buffer, done: (err?: Error | null) => void): void {
  write(fd, buf, 0, buf.length, null, (err, n) => {
    if (err) done(err);
    else if (n < buf.length) writeAll(fd, buf.subarray(n), done);
    else done();
  });
}

function linesOf(f: LogFormat): (events: readonly AuditEvent[]) => string {
  const line = f.format === 'legacy' ? legacyLine : eventJson;
  const truncate = f.truncate;
  if (!truncate)
    return (events) => {
      let out = '';
      for (const ev of events) out += `${line(ev)}\n`;
      return out;
    };
  return (events) => {
    let out = '';
    for (const batch of truncate.split(events)) for (const e of batch) out += `${f.format === 'legacy' ? legacyLine(e.event) : e.json}\n`;
    return out;
  };
}

/** `file` → `file.gz`, then the original removed (lumberjack's compressLogFile). */
async function gzipAway(file: string): Promise<void> {
  try {
    await pipeline(createReadStream(file), createGzip(), createWriteStream(`${file}.gz`, { mode: 0o600 }));
  } catch (err) {
    // No half-written .gz beside the copy it failed to compress.
    await unlink(`${file}.gz`).catch(() => undefined);
    throw err;
  }
  await unlink(file);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
