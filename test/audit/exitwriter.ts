// Fixture of logbackend.test.ts: audits N events to a log, then ends the
// process at once — `exit` (process.exit) or `throw` (an uncaught error) —
// before the log's coalescing window has passed. Args: <log> <n> <how>.
import { LogBackend } from '../../gateway/audit/logbackend.js';
import type { AuditEvent } from '../../gateway/audit/event.js';

const [log, n, how] = process.argv.slice(2) as [string, string, string];
const b = new LogBackend(log, { maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0 });
for (let i = 0; i < Number(n); i++) {
  void b.process([{ kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Metadata', auditID: `id-${i}`, stage: 'ResponseComplete', requestURI: '/x', verb: 'get',
    user: { username: 'u', groups: [] }, sourceIPs: [], requestReceivedTimestamp: 't', stageTimestamp: 't' } as AuditEvent]).catch(() => undefined);
}
if (how === 'exit') process.exit(0);
throw new Error('the process fails with events not yet written');
