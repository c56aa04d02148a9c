// The store as leader-only controllers see it: every write first asks the
// elector whether this process still leads (renewed within the renew
// deadline). A process that was paused (SIGSTOP, a long GC, a VM freeze)
// resumes with timers and watch events queued; whichever runs first, a
// controller's write is refused until the elector has renewed or stepped
// down, so no two processes act as leader at once.
import { StoreError, type Store } from '../../store/types.js';

export function fencedStore(store: Store, isLeading: () => boolean): Store {
  const fence = (key: string): void => {
    if (!isLeading()) throw new StoreError('unreachable', `${key}: not written: this process is not the leader (its controllers are stopping)`);
  };
  return {
    create: async (key, obj) => {
      fence(key);
      return store.create(key, obj);
    },
    update: async (key, obj, rev) => {
      fence(key);
      return store.update(key, obj, rev);
    },
    delete: async (key, rev) => {
      fence(key);
      return store.delete(key, rev);
    },
    deleteCorrupt: async (key) => {
      fence(key);
      return store.deleteCorrupt(key);
    },
    get: (key, minRev) => store.get(key, minRev),
    list: (prefix, opts) => store.list(prefix, opts),
    watch: (prefix, fromRev, sink) => store.watch(prefix, fromRev, sink),
    currentRev: () => store.currentRev(),
    waitForRev: (rev, ms) => store.waitForRev(rev, ms),
    check: () => store.check(),
    close: () => store.close(),
  };
}
