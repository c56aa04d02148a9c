// --audit-log-path: one JSON event per line (--audit-log-format=json) to a file
// or to stdout (`-`). Lines written in one event-loop turn go out in one write
// (kube writes each event at once; one write per turn keeps the request path
// to a string append and bounds the loss on a crash to that turn). With
// --audit-log-maxsize/-maxbackup/-maxage, rotation as lumberjack (which kube
// uses) does it: the file is renamed `<name>-<UTC time>.<ext>` when the next
// write would pass maxsize MB (100 when only the others are set), then old
// copies beyond maxbackup or older than maxage days are removed.
import { closeSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { AuditBackend } from './backend.js';
import type { AuditEvent } from './event.js';

export interface LogRotation {
  maxAgeDays: number;
  maxBackups: number;
  maxSizeMB: number;
}

const MB = 1024 * 1024;

export class LogBackend implements AuditBackend {
  readonly plugin = 'log';
  private fd: number | undefined;
  private size = 0;
  private pending = '';
  private scheduled = false;
  private readonly maxBytes: number;

  constructor(private readonly path: string, private readonly rotation: LogRotation, private readonly clock: () => number = Date.now) {
    const rotate = rotation.maxAgeDays > 0 || rotation.maxBackups > 0 || rotation.maxSizeMB > 0;
    this.maxBytes = rotate ? (rotation.maxSizeMB || 100) * MB : Infinity;
    if (path !== '-') this.open();
  }

  process(events: readonly AuditEvent[]): Promise<void> {
    for (const ev of events) this.pending += `${JSON.stringify(ev)}\n`;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => { this.scheduled = false; try { this.flush(); } catch { /* counted by the caller's next write */ } });
    }
    return Promise.resolve();
  }

  /** Writes now (blocking-strict's RequestReceived); throws when the write fails. */
  processNow(events: readonly AuditEvent[]): void {
    for (const ev of events) this.pending += `${JSON.stringify(ev)}\n`;
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
    renameSync(this.path, join(dirname(this.path), `${stem}-${stamp}${ext}`));
    this.open();
    this.prune(stem, ext);
  }

  /** Removes backups beyond maxbackup (oldest first) and older than maxage days. */
  private prune(stem: string, ext: string): void {
    const dir = dirname(this.path);
    const re = new RegExp(`^${escape(stem)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})${escape(ext)}$`);
    const backups = readdirSync(dir).flatMap((f) => {
      const m = re.exec(f);
      if (!m) return [];
      const t = Date.parse(`${m[1]!.slice(0, 10)}T${m[1]!.slice(11).replace(/-/g, ':')}Z`);
      return [{ f, t }];
    }).sort((a, b) => b.t - a.t);
    const cutoff = this.rotation.maxAgeDays > 0 ? this.clock() - this.rotation.maxAgeDays * 86_400_000 : -Infinity;
    backups.forEach((b, i) => {
      if ((this.rotation.maxBackups > 0 && i >= this.rotation.maxBackups) || b.t < cutoff) {
        try { unlinkSync(join(dir, b.f)); } catch { /* already gone */ }
      }
    });
  }

  shutdown(): Promise<void> {
    try { this.flush(); } finally {
      if (this.fd !== undefined) { closeSync(this.fd); this.fd = undefined; }
    }
    return Promise.resolve();
  }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
