// With `appendonly yes` and `appendfsync always`, no write the store
// acknowledged is lost when redis-server is killed with SIGKILL under load.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { RedisStore } from '../../backends/core/store/redis.js';
import { StoreError } from '../../backends/core/store/types.js';
import { pod, rv } from '../store/helpers.js';
import { RedisServer, redisServerSkipReason } from './redis-server.js';

const skip = await redisServerSkipReason();

describe('redis durability', { skip }, () => {
  let redis: RedisServer | undefined;
  after(async () => {
    await redis?.destroy();
  });

  it('keeps every acknowledged write across kill -9 of redis with appendfsync always', async () => {
    redis = await RedisServer.start(['--appendonly', 'yes', '--appendfsync', 'always']);
    const store = await RedisStore.open({ url: redis.url, prefix: 'durable', historyWindowMs: 60_000 });
    const acked = new Map<string, number>(); // key → newest acknowledged revision
    let failures = 0;
    let acks = 0;
    let stop = false;
    const writer = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const key = `core/configmaps/w${w}/c${i % 50}`;
        try {
          const obj = i < 50 ? await store.create(key, pod(`w${w}`, `c${i}`)) : await store.update(key, pod(`w${w}`, `c${i % 50}`, { spec: { n: i } }));
          acked.set(key, rv(obj));
          acks++;
        } catch (err) {
          assert.ok(err instanceof StoreError && err.code === 'unreachable', String(err));
          failures++;
          if (failures > 200) return;
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    while (acks < 1500) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100)); // keep writing a little longer: the kill lands mid-load
    await redis.stop('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await store.close();
    assert.ok(acked.size > 0);

    await redis.restart();
    const reopened = await RedisStore.open({ url: redis.url, prefix: 'durable', historyWindowMs: 60_000 });
    try {
      let missing = 0;
      for (const [key, rev] of acked) {
        const obj = await reopened.get(key);
        if (!obj || rv(obj) < rev) missing++;
      }
      assert.equal(missing, 0, `${missing} of ${acked.size} acknowledged writes were lost`);
      assert.ok((await reopened.currentRev()) >= Math.max(...acked.values()));
      console.log(`${acks} acknowledged writes to ${acked.size} keys, newest acknowledged revision ${Math.max(...acked.values())}, all present after kill -9`);
    } finally {
      await reopened.close();
    }
  });
});
