// --audit-log-path: one event per line to a file or to stdout (`-`), as JSON
// (--audit-log-format=json) or kube's legacy text (legacy.ts). Lines written in one event-loop turn go out in one write
// (kube writes each event at once; one write per turn keeps the request path
// to a string append and bounds the loss on a crash to that turn). With
// --audit-log-maxsize/-maxbackup/-maxage, rotation as lumberjack (which kube
// uses) does it: the file is renamed `<name>-<UTC time>.<ext>` when the next
// write would pass maxsize MB (100 when only the others are set), then old
// copies beyond maxbackup or older than maxage days are removed; with
// --audit-log-compress a rotated copy is gzipped (`….log.gz`) in the
// background, as lumberjack's Compress. With --audit-log-truncate-enabled,
// events pass through the truncate plugin first (truncate.ts).
import { closeSync, createReadStream, createWriteStream, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { AuditBackend } from './backend.js';
import type { AuditEvent } from './event.js';
import { legacyLine } from './legacy.js';
import type { Truncator } from './truncate.js';

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

export class LogBackend implements AuditBackend {
  readonly plugin = 'log';
  private fd: number | undefined;
  private size = 0;
  private pending = '';
  private scheduled = false;
  private readonly maxBytes: number;
  /** Compressions and pruning after them, in rotation order (--audit-log-compress). */
  private mill: Promise<void> = Promise.resolve();
  private readonly lines: (events: readonly AuditEvent[]) => string;

  constructor(private readonly path: string, private readonly rotation: LogRotation, private readonly clock: () => number = Date.now, format: LogFormat = {}) {
    const rotate = rotation.maxAgeDays > 0 || rotation.maxBackups > 0 || rotation.maxSizeMB > 0;
    this.maxBytes = rotate ? (rotation.maxSizeMB || 100) * MB : Infinity;
    this.lines = linesOf(format);
    if (path !== '-') this.open();
  }

  process(events: readonly AuditEvent[]): Promise<void> {
    this.pending += this.lines(events);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => { this.scheduled = false; try { this.flush(); } catch { /* counted by the caller's next write */ } });
    }
    return Promise.resolve();
  }

  /** Writes now (blocking-strict's RequestReceived); throws when the write fails. */
  processNow(events: readonly AuditEvent[]): void {
    this.pending += this.lines(events);
    this.flush();
  }

  private flush(): void {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    if (this.path === '-') { process.stdout.write(text); return; }
    const buf = Buffer.from(text);
    if (this.size > 0 && this.size + buf.length > this.maxBytes) this.rotate();
    writeSync(this.fd!, buf);
    this.size += buf.length;
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
    if (!this.rotation.compress) { this.prune(stem, ext); return; }
    // As lumberjack's mill: one copy at a time is compressed, then old copies are removed, so a
    // copy is never removed while it is being read.
    this.mill = this.mill.then(() => gzipAway(rotated).catch(() => undefined)).then(() => {
      try { this.prune(stem, ext); } catch { /* the directory went away: nothing to prune */ }
    });
  }

  /** Removes backups beyond maxbackup (oldest first) and older than maxage days. */
  private prune(stem: string, ext: string): void {
    const dir = dirname(this.path);
    const re = new RegExp(`^${escape(stem)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})${escape(ext)}(?:\\.gz)?$`);
    const backups = readdirSync(dir).flatMap((f) => {
      const m = re.exec(f);
      if (!m) return [];
      const t = Date.parse(`${m[1]!.slice(0, 10)}T${m[1]!.slice(11).replace(/-/g, ':')}Z`);
      return [{ f, t }];
    }).sort((a, b) => b.t - a.t);
    const cutoff = this.rotation.maxAgeDays > 0 ? this.clock() - this.rotation.maxAgeDays * 86_400_000 : -Infinity;
    // A copy caught between its .gz being written and its .log removed is there twice: one backup.
    const rank = new Map<number, number>();
    for (const b of backups) if (!rank.has(b.t)) rank.set(b.t, rank.size);
    backups.forEach((b) => {
      if ((this.rotation.maxBackups > 0 && rank.get(b.t)! >= this.rotation.maxBackups) || b.t < cutoff) {
        try { unlinkSync(join(dir, b.f)); } catch { /* already gone */ }
      }
    });
  }

  async shutdown(): Promise<void> {
    try { this.flush(); } finally {
      if (this.fd !== undefined) { closeSync(this.fd); this.fd = undefined; }
    }
    await this.mill;
  }
}

function linesOf(f: LogFormat): (events: readonly AuditEvent[]) => string {
  const line = f.format === 'legacy' ? legacyLine : (ev: AuditEvent) => JSON.stringify(ev);
  const truncate = f.truncate;
  if (!truncate) return (events) => { let out = ''; for (const ev of events) out += `${line(ev)}\n`; return out; };
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
