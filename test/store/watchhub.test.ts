// The watch hub's start: history, then what arrived before the replay ran, then live; an event a sink causes while
// the queued events drain (a consumer that writes from inside event()) is delivered, in order, not dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WatchHub } from '../../backends/core/store/watchers.js';
import type { StoreEvent } from '../../backends/core/store/types.js';

const ev = (rev: number): StoreEvent => ({
  type: 'ADDED',
  key: `core/configmaps/default/c${rev}`,
  rev,
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${rev}`, namespace: 'default', resourceVersion: String(rev) } },
});

test('an event dispatched by a sink while the queued events drain is delivered after them', async () => {
  const hub = new WatchHub();
  const seen: number[] = [];
  hub.add('core/configmaps/', 0, [ev(1)], {
    event(e) {
      seen.push(e.rev);
      // The sink writes when it sees rev 2, which the hub received before the replay ran.
      if (e.rev === 2) hub.dispatch(ev(3), 'core/configmaps/');
    },
    error(err) {
      throw err;
    },
  });
  hub.dispatch(ev(2), 'core/configmaps/');
  await new Promise((r) => setImmediate(r));
  hub.dispatch(ev(4), 'core/configmaps/');
  assert.deepEqual(seen, [1, 2, 3, 4]);
});
