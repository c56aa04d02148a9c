// Gatehouse under test, in its own process: `gatehouse serve` with the flags
// given on the command line, plus an IPC channel for memory readings.
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
// BENCH_DIST: another build's directory (bench/ab.ts runs an earlier build beside dist/).
const src = process.env['BENCH_DIST'] ?? (process.env['BENCH_FROM_SOURCE'] ? '..' : '../dist');
const { parseServeFlags } = (await import(`${src}/gateway/config/flags.js`)) as typeof import('../gateway/config/flags.js');
const { startServer } = (await import(`${src}/gateway/server/app.js`)) as typeof import('../gateway/server/app.js');
import { heapSnapshot, memoryNow, serveCommands } from './procs.js';
import type { ServerResponse } from 'node:http';

// As `gatehouse serve` runs (gateway/cli/main.ts); BENCH_NO_HARDEN=1 measures without it.
if (process.env['BENCH_NO_HARDEN'] !== '1') {
  const { hardenIntrinsics } = (await import(`${src}/gateway/cli/harden.js`)) as typeof import('../gateway/cli/harden.js');
  hardenIntrinsics();
}
const parsed = parseServeFlags(process.argv.slice(2));
if ('error' in parsed) throw new Error(parsed.error);
const log = (msg: string): void => {
  if (process.env['BENCH_SERVER_LOG']) process.stderr.write(`[gatehouse] ${msg}\n`);
};
// The floor of consistent reads that must ask Redis (bench/redis-read.ts): BENCH_FENCED_MEMORY=<redis url>
// makes the memory store's consistent GET and LIST (no revision given) first wait for a revision check
// against that Redis, shared as the Redis store shares its checks (the same ReadFence, a client made by
// the same redisTarget): what such a read costs with no Redis cache, feed or decoding around it.
const fencedUrl = process.env['BENCH_FENCED_MEMORY'];
if (fencedUrl) {
  const { MemoryStore } = (await import(`${src}/backends/core/store/memory.js`)) as typeof import('../backends/core/store/memory.js');
  const { ReadFence } = (await import(`${src}/backends/core/store/redis-readindex.js`)) as typeof import('../backends/core/store/redis-readindex.js');
  const { connect, redisTarget } = (await import(`${src}/backends/core/store/redis-connect.js`)) as typeof import('../backends/core/store/redis-connect.js');
  const target = redisTarget(fencedUrl, 5000);
  const client = await connect(target.make({ name: 'bench-fence' }), 5000, target.where);
  const fence = new ReadFence(async () => Number((await client.get('gh-bench-fence:rev')) ?? 0));
  const proto = MemoryStore.prototype;
  const { get, list } = proto;
  proto.get = function (this: InstanceType<typeof MemoryStore>, key: string, minRev?: number) {
    return minRev !== undefined ? get.call(this, key, minRev) : fence.fresh().then(() => get.call(this, key));
  };
  proto.list = function (this: InstanceType<typeof MemoryStore>, prefix: string, opts: Parameters<typeof list>[1] = {}) {
    return opts.minRev !== undefined || opts.rev !== undefined ? list.call(this, prefix, opts) : fence.fresh().then(() => list.call(this, prefix, opts));
  };
}
const running = await startServer(parsed.options, { log });
// A reference for the Metadata audit (bench/audit.ts): BENCH_AUDIT_REFERENCE=<file>, on a server with
// auditing off, does per request only what an audit log must — kube's way: the whole Event of the
// request (its Audit-Id, URI, verb, user, source IP, user agent, objectRef, status, two timestamps,
// the authentication and authorization annotations) marshalled at once when the answer is done, the lines gathered and
// written to the file every 5 ms — and nothing of a policy, a recording or stages. With
// BENCH_AUDIT_REFERENCE_FIXED=<bytes> too, the floor: a fixed line of that size per request instead
// of the Event (the log's I/O and the 'finish' listener alone).
const auditReference = process.env['BENCH_AUDIT_REFERENCE'];
if (auditReference) {
  const { openSync, write } = await import('node:fs');
  const fd = openSync(auditReference, 'a', 0o600);
  let pending: string[] = [];
  let writing = false;
  const flush = (): void => {
    if (writing || pending.length === 0) return;
    const bytes = Buffer.from(pending.join(''));
    pending = [];
    writing = true;
    write(fd, bytes, () => {
      writing = false;
    });
  };
  setInterval(flush, 5).unref();
  const user = { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] };
  const fixedLine = process.env['BENCH_AUDIT_REFERENCE_FIXED'] ? `${'x'.repeat(Number(process.env['BENCH_AUDIT_REFERENCE_FIXED']) - 1)}\n` : undefined;
  running.server.prependListener('request', (req: import('node:http').IncomingMessage, res: ServerResponse) => {
    const received = new Date().toISOString();
    res.once('finish', () => {
      if (fixedLine !== undefined) {
        pending.push(fixedLine);
        return;
      }
      const parts = (req.url ?? '/').split('?')[0]!.split('/');
      pending.push(
        `${JSON.stringify({
          kind: 'Event',
          apiVersion: 'audit.k8s.io/v1',
          level: 'Metadata',
          auditID: req.headers['audit-id'],
          stage: 'ResponseComplete',
          requestURI: req.url,
          verb: req.method === 'GET' ? 'get' : 'create',
          user,
          sourceIPs: [req.socket.remoteAddress],
          userAgent: req.headers['user-agent'],
          objectRef: { resource: parts[5], namespace: parts[4], name: parts[6], apiVersion: 'v1' },
          responseStatus: { metadata: {}, code: res.statusCode },
          requestReceivedTimestamp: received,
          stageTimestamp: new Date().toISOString(),
          annotations: { 'authentication.gatehouse.dev/authenticator': 'x509', 'authorization.k8s.io/decision': 'allow' },
        })}\n`,
      );
    });
  });
}
// CPU profile of one measurement (BENCH_CPU_PROF): started and stopped by the orchestrator.
// With BENCH_HEAP_PROF=1 too, a sampling allocation profile of the same window (.heapprofile).
const heapProf = process.env['BENCH_HEAP_PROF'] === '1';
const session = new Session();
session.connect();
// Calibration (bench/authn.ts): a known amount of synchronous work per request, to see what
// N µs of added work costs through the full stack on this machine.
let spinUs = 0;
running.server.prependListener('request', () => {
  if (spinUs === 0) return;
  const until = performance.now() + spinUs / 1000;
  while (performance.now() < until);
});
// The floor of priority and fairness (bench/flowcontrol.ts): with APF off, BENCH_PF_HEADERS=1 sets the two
// response headers kube's APF must set on every answer, so that APF's own work is what on/floor measures.
if (process.env['BENCH_PF_HEADERS'] === '1') {
  // Added to the head's own headers object, as carried headers are (lib/http/carried.ts), not set:
  // setHeader would cost the floor more than APF pays. The chain's context is out of reach from
  // here, so this response's writeHead adds them.
  running.server.prependListener('request', (_req: unknown, res: ServerResponse) => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, code: number, ...rest: unknown[]) {
      const h = rest[rest.length - 1];
      if (h !== null && typeof h === 'object' && !Array.isArray(h)) {
        const o = h as Record<string, string>;
        o['X-Kubernetes-PF-FlowSchema-UID'] = '7a0d2f4e-9c1b-4e55-8d7b-3f6a1c2e9b10';
        o['X-Kubernetes-PF-PriorityLevel-UID'] = 'c3b8e1d2-5f4a-4b6c-9e7d-1a2b3c4d5e6f';
      }
      return (writeHead as (...a: unknown[]) => ServerResponse).call(this, code, ...rest);
    } as typeof res.writeHead;
  });
}
serveCommands({
  mem: () => memoryNow(),
  // A heap snapshot after a full GC (bench/watch-heap.ts compares them).
  snapshot: (a: { file: string }) => heapSnapshot(a.file),
  spin: (a: { us: number }) => {
    spinUs = a.us;
  },
  profStart: async () => {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    if (heapProf)
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
  },
  profStop: async (a: { file: string }) => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(a.file, JSON.stringify(profile));
    if (heapProf) {
      const heap = await session.post('HeapProfiler.stopSampling');
      await writeFile(a.file.replace(/\.cpuprofile$/, '') + '.heapprofile', JSON.stringify(heap.profile));
    }
  },
});
