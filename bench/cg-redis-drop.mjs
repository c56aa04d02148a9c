// Deletes every key of a Redis store prefix (the callgrind harnesses on Redis
// run under a fresh prefix each and leave nothing behind).
import { Redis } from 'ioredis';

export async function dropRedisPrefix(url, pattern) {
  const r = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
