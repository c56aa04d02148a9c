// A model, not a measurement: what the file store's group commit gives a create's latency when the
// only noise is the disk. One server core as an event loop, C (50) closed-loop clients. A turn: poll
// takes every request arrived by then and the sync's completion if done; a request costs IN µs before
// the store (190), a committed write OUT µs to answer (50; memory: IN + OUT at once). Answers leave at
// the turn's end; the client's next request arrives RTT ms later (0.3). Each sync takes SYNCCPU µs of
// the same core (150: the pinned thread pool's kernel time) and a wall time drawn from SYNCS (a file
// of ms samples, one a line: bench/fsync-probe.mjs DUMP=) or SYNC ms fixed (3). Cut rules (POLICIES):
// `turn` (the store's: the check phase of the turn), `nowK` (at the sync's completion when ≥ K writes
// wait, else the turn rule), `waitX` (X ms after the previous sync); `memory` has no sync.
// Figures: docs/decisions/2026-11-30-file-store-create-p99-floor.md. `node bench/file-commit-model.mjs`
import { readFileSync } from 'node:fs';
const IN = Number(process.env.IN ?? 190) / 1000,
  OUT = Number(process.env.OUT ?? 50) / 1000,
  SYNCCPU = Number(process.env.SYNCCPU ?? 150) / 1000,
  RTT = Number(process.env.RTT ?? 0.3);
const samples = process.env.SYNCS ? readFileSync(process.env.SYNCS, 'utf8').trim().split('\n').map(Number) : [Number(process.env.SYNC ?? 3)];
function run(policy, C = 50, N = 300000) {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  let t = 0,
    done = 0,
    syncs = 0;
  const lat = [];
  let arrivals = Array.from({ length: C }, (_, i) => ({ at: i * 0.01, sent: i * 0.01 }));
  let q = [],
    inflight = null,
    syncEnd = Infinity,
    waitUntil = -1;
  const start = () => {
    inflight = q;
    q = [];
    syncs++;
    t += SYNCCPU;
    syncEnd = t + samples[Math.floor(rnd() * samples.length)];
  };
  while (done < N) {
    const ready = arrivals.filter((a) => a.at <= t);
    const syncDone = syncEnd <= t;
    if (!ready.length && !syncDone && !(waitUntil >= 0 && waitUntil <= t && q.length && !inflight)) {
      t = Math.min(...arrivals.map((a) => a.at), syncEnd, waitUntil >= 0 && q.length && !inflight ? waitUntil : Infinity);
      continue;
    }
    arrivals = arrivals.filter((a) => a.at > t);
    const answered = [];
    if (syncDone) {
      const batch = inflight;
      inflight = null;
      syncEnd = Infinity;
      for (const r of batch) {
        t += OUT;
        answered.push(r);
      }
      const k = policy.startsWith('now') ? Number(policy.slice(3) || 1) : Infinity;
      if (q.length >= k) start();
      if (policy.startsWith('wait')) waitUntil = t + Number(policy.slice(4));
    }
    for (const r of ready) {
      t += IN;
      if (policy === 'memory') {
        t += OUT;
        answered.push(r);
      } else q.push(r);
    }
    for (const r of answered) {
      lat.push(t - r.sent);
      done++;
      arrivals.push({ at: t + RTT, sent: t + RTT });
    }
    // check phase
    if (!inflight && q.length && policy !== 'memory') {
      if (!policy.startsWith('wait') || t >= waitUntil) start();
    }
  }
  lat.sort((a, b) => a - b);
  const p = (x) => lat[Math.floor(x * lat.length)].toFixed(1);
  return `${policy.padEnd(7)} ${((N / t) * 1000).toFixed(0)}/s p50 ${p(0.5)} p99 ${p(0.99)} ms, ${policy === 'memory' ? '-' : (N / syncs).toFixed(1)} a sync`;
}
for (const p of (process.env.POLICIES ?? 'memory,turn,now1,now8,now16,wait1').split(',')) console.log(run(p));
