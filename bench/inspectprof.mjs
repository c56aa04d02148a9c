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
