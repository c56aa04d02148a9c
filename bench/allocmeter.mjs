// Bytes this process allocated on V8's heap over a stretch of work, and the
// collections it took (v8.GCProfiler): for each collection the heap's use
// before it minus its use after the previous one, plus the growth since the
// last. V8 gives no running total of allocated bytes; this is that total to
// within what a collection frees of objects allocated since the previous one
// (nothing: every object is counted in the "before" of the next collection).
import { GCProfiler, getHeapStatistics } from 'node:v8';

export function startAllocMeter() {
  const p = new GCProfiler();
  const start = getHeapStatistics().used_heap_size;
  p.start();
  return {
    stop() {
      const end = getHeapStatistics().used_heap_size;
      const { statistics } = p.stop();
      let bytes = 0;
      let last = start;
      let scavenges = 0;
      let marks = 0;
      let pauseUs = 0;
      for (const s of statistics) {
        bytes += s.beforeGC.heapStatistics.usedHeapSize - last;
        last = s.afterGC.heapStatistics.usedHeapSize;
        if (s.gcType === 'Scavenge') scavenges++;
        else marks++;
        pauseUs += s.cost;
      }
      bytes += end - last;
      return { bytes, scavenges, marks, pauseUs };
    },
  };
}

/**
 * A measured stretch's figures per operation, as the cg-*.mjs scripts print them after `bad <n>`: the process's
 * CPU (a process.cpuUsage difference), and the allocation and collections of startAllocMeter's stop().
 */
export function perOperation(cpu, alloc, n) {
  return [
    'cpu µs/GET',
    ((cpu.user + cpu.system) / n).toFixed(1),
    'bytes/GET',
    Math.round(alloc.bytes / n),
    'scavenges/1000',
    ((alloc.scavenges * 1000) / n).toFixed(2),
    'mark-compacts',
    alloc.marks,
    'GC pause µs/GET',
    (alloc.pauseUs / n).toFixed(1),
  ];
}
