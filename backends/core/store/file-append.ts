// The log file's durable append. A batch is one write(2) on a descriptor
// opened with O_DSYNC, which returns only once the bytes (and the metadata
// needed to read them back) are on disk — the guarantee of write + fdatasync
// in one system call and one trip through libuv's thread pool. Where the
// platform has no O_DSYNC the append is write + fdatasync. Syncs and the
// records they carried are counted: group commit is visible in those figures
// (tests, `gatehouse_file_store_*` metrics).
import { close, constants, fdatasync, fsync, ftruncate, open, write } from 'node:fs';
import { promisify } from 'node:util';

const openAsync = promisify(open);
const closeAsync = promisify(close);
const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);
const ftruncateAsync = promisify(ftruncate);

/** Figures of the durable appends since open: syncs made and the log records they made durable. */
export interface SyncStats {
  syncs: number;
  records: number;
}

export class LogAppender {
  private readonly stats: SyncStats = { syncs: 0, records: 0 };

  private constructor(
    private readonly fd: number,
    /** Every write is durable on return (O_DSYNC); otherwise each append adds an fdatasync. */
    private readonly dsync: boolean,
  ) {}

  static async open(path: string): Promise<LogAppender> {
    // O_DSYNC is undefined where the platform lacks it (Windows).
    const dsync = typeof constants.O_DSYNC === 'number' && constants.O_DSYNC !== 0;
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (dsync ? constants.O_DSYNC : 0);
    return new LogAppender(await openAsync(path, flags, 0o644), dsync);
  }

  /** Appends buf and returns once it is on disk; `records` is what it carries (for the figures). */
  async append(buf: Buffer, records: number): Promise<void> {
    let done = 0;
    while (done < buf.length) {
      done += (await writeAsync(this.fd, buf, done, buf.length - done, null)).bytesWritten;
      if (this.dsync) this.stats.syncs++;
    }
    if (!this.dsync) {
      await fdatasyncAsync(this.fd);
      this.stats.syncs++;
    }
    this.stats.records += records;
  }

  /** Cuts the log to `length` bytes, durably (a torn tail at open, an emptied log after compaction). */
  async truncate(length: number): Promise<void> {
    await ftruncateAsync(this.fd, length);
    await fsyncAsync(this.fd);
  }

  syncStats(): SyncStats {
    return { ...this.stats };
  }

  close(): Promise<void> {
    return closeAsync(this.fd);
  }
}
