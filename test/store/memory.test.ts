import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../backends/core/store/memory.js';
import { openStore } from '../../backends/core/store/index.js';
import { storeContract } from './contract.js';

storeContract('memory', async (opts) => ({ store: new MemoryStore(opts), cleanup: async () => {} }));

describe('openStore', () => {
  it('opens a memory store', async () => {
    const store = await openStore({ backend: 'memory', historyWindowMs: 1000 });
    await store.check();
    await store.close();
  });

  it('rejects an unknown or unavailable backend with a clear message', async () => {
    const bad = { backend: 'etcd', historyWindowMs: 1000 } as unknown as Parameters<typeof openStore>[0];
    await assert.rejects(openStore(bad), /invalid store backend "etcd"/);
    const redis = { backend: 'redis', historyWindowMs: 1000 } as unknown as Parameters<typeof openStore>[0];
    await assert.rejects(openStore(redis), /backend "redis" needs a url/);
    await assert.rejects(openStore({ backend: 'file', historyWindowMs: 1000 }), /needs a dir/);
  });
});
