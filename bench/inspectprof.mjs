// PROF=<file> for the callgrind-free runs of cg-gets.mjs and cg-proxy.mjs: a
// V8 CPU profile of this process over the measured requests alone (started
// after start-up and warm-up, stopped before shutdown), through the inspector.
// PROF_US=<µs>: the sampling interval (V8's default 1000 µs; 100 gives a
// function of a few µs per request enough samples over a few thousand).
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

/** Starts profiling when PROF is set; the returned stop() writes the profile to PROF (a no-op without it). */
export async function startProfile() {
  const file = process.env.PROF;
  if (!file) return { stop: async () => {} };
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  if (process.env.PROF_US) await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.PROF_US) });
  await session.post('Profiler.start');
  return {
    stop: async () => {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * HEAPPROF=<file>: V8's sampling heap profile of this thread over the same
 * stretch, every allocation sampled (HEAPPROF_BYTES, default 256, apart on
 * average), the objects already collected again included: where the bytes
 * allocated per request come from, not what stays. A .heapprofile
 * (Chrome DevTools; bench/heapsites.mjs sums it by function).
 */
export async function startHeapProfile() {
  const file = process.env.HEAPPROF;
  if (!file) return { stop: async () => {} };
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: Number(process.env.HEAPPROF_BYTES ?? 256),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    stop: async () => {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
