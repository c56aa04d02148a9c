// Background compaction of the change feed: entries committed before the
// history window are trimmed (XTRIM MINID), always keeping the newest entry so
// a reader that fell behind sees a gap rather than silence. Objects live in
// their hash only while they exist, so a delete leaves no tombstone beyond
// its feed entry. Every process may run this: trimming is idempotent.
import type { Redis } from 'ioredis';
import type { RedisKeys } from './redis-keys.js';

const BATCH = 512;
/** Entries examined per run at most, so one run never holds Redis or the event loop long. */
const MAX_SCAN = 64 * BATCH;

function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** Trims feed entries committed before cutoffMs; returns how many were removed. */
export async function trimFeed(client: Redis, keys: RedisKeys, cutoffMs: number): Promise<number> {
  let start = '-';
  let minId: string | undefined;
  for (let scanned = 0; scanned < MAX_SCAN; scanned += BATCH) {
    const rows = await client.xrange(keys.feed, start, '+', 'COUNT', BATCH);
    if (rows.length === 0) break;
    const fresh = rows.find(([, f]) => Number(field(f, 't')) >= cutoffMs);
    if (fresh) {
      minId = fresh[0];
      break;
    }
    const lastId = rows[rows.length - 1]![0];
    minId = lastId; // everything so far is old; keep at least this one
    if (rows.length < BATCH) break;
    start = `(${lastId}`;
  }
  return minId === undefined ? 0 : client.xtrim(keys.feed, 'MINID', minId);
}

export class FeedCompactor {
  private readonly timer: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly client: Redis,
    private readonly keys: RedisKeys,
    private readonly windowMs: number,
    private readonly clock: () => number,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.run(), intervalMs);
    this.timer.unref();
  }

  /** One pass; failures (Redis down) are left for the next pass. */
  async run(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    try {
      return await trimFeed(this.client, this.keys, this.clock() - this.windowMs);
    } catch {
      return 0; // unreachable: the feed reader and check() report it; the next pass retries
    } finally {
      this.running = false;
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
