// The audit's whole work per Metadata-audited request in one process, the log
// included: the recording and its event (gateway/audit/auditor.ts), the line
// and the log's gathered writes to a file (logbackend.ts), 20 requests per
// event-loop turn as a loaded server completes them, the policy of the Audit
// section (Metadata, RequestReceived omitted), blocking mode (kube's default).
// Prints the process CPU per request (every thread: the thread pool's writes
// included) of 5 rounds. For A/B figures below the end-to-end rows' noise.
// Knobs: DIST (a build, default ../dist; an earlier copy of dist for an A/B),
// N (requests per round, 400000), MODE (blocking, batch, blocking-strict).
// CALLGRIND=1 (under valgrind, N=10000): instructions instead, see below:
//   CALLGRIND=1 N=10000 valgrind --tool=callgrind --smc-check=all-non-file \
//     --callgrind-out-file=/tmp/cg.out node bench/audit-turns.mjs   # then /tmp/cg.out.1's total / N
import { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditedGet, fresh, URL } from './auditedget.mjs';

const dist = process.env.DIST ?? '../dist';
const { Auditor } = await import(`${dist}/gateway/audit/auditor.js`);
const { AuditPolicy } = await import(`${dist}/gateway/audit/policy.js`);
const { LogBackend } = await import(`${dist}/gateway/audit/logbackend.js`);
const { parseRequestInfo } = await import(`${dist}/lib/api/requestinfo.js`);

const { req, user, renew } = auditedGet();
const info = parseRequestInfo('GET', URL, false);
const policy = AuditPolicy.parse('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n', 'bench');
const dir = await mkdtemp(join(tmpdir(), 'gatehouse-audit-turns-'));
const log = new LogBackend(join(dir, 'audit.log'), { maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0 });
const auditor = new Auditor({ policy, sinks: [{ backend: log, mode: process.env.MODE ?? 'blocking' }], log: () => undefined, maxBodyBytes: 1 << 20 });
const res = new ServerResponse(req);
const N = Number(process.env.N ?? 400_000);
const ids = Array.from({ length: 1000 }, () => randomUUID());
const perRequest = [];
/** n audited requests, 20 per event-loop turn. */
async function requests(n) {
  for (let i = 0; i < n; i += 20) {
    for (let k = 0; k < 20; k++) {
      renew();
      const a = auditor.begin(req, res, info, user, fresh(ids[(i + k) % 1000]), false);
      a.annotate('authentication.gatehouse.dev/authenticator', 'x509');
      a.received();
      a.annotate('authorization.k8s.io/decision', 'allow');
      a.complete(200);
    }
    await new Promise((r) => setImmediate(r));
  }
}
/** callgrind_control on this process, the event loop kept busy so valgrind reads the command. */
async function callgrind(flag) {
  const { execFile } = await import('node:child_process');
  const tick = setInterval(() => {}, 5);
  await new Promise((ok, no) => execFile('callgrind_control', [flag, String(process.pid)], (err) => (err ? no(err) : ok())));
  clearInterval(tick);
}
try {
  if (process.env.CALLGRIND === '1') {
    // Under `valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file=X`: WARM requests
    // (default 20000), counters zeroed, N requests, dumped to X.1 — instructions per request = its total / N,
    // every thread (the log's writes) included, start-up and JIT warm-up not.
    await requests(Number(process.env.WARM ?? 20_000));
    await callgrind('-z');
    await requests(N);
    await new Promise((r) => setTimeout(r, 20)); // the last turn's write
    await callgrind('-d');
  } else {
    for (let round = 0; round < 5; round++) {
      const c0 = process.cpuUsage();
      await requests(N);
      const c = process.cpuUsage(c0);
      perRequest.push((c.user + c.system) / N);
    }
    console.log(
      `audit work per Metadata-audited request, log to a file: µs CPU ${perRequest.map((x) => x.toFixed(2)).join(' ')}, median ${[...perRequest].sort((a, b) => a - b)[2].toFixed(2)}`,
    );
  }
} finally {
  await auditor.shutdown();
  await rm(dir, { recursive: true, force: true });
}
