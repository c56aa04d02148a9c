// Fixture of logbackend.test.ts: audits N events to a log, then ends the
// process at once — `exit` (process.exit) or `throw` (an uncaught error) —
// before the log's coalescing window has passed. Args: <log> <n> <how> [via].
// via `auditor`: N requests completed through an Auditor in this turn, whose
// events it still holds for the end of the turn when the process ends.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { LogBackend } from '../../gateway/audit/logbackend.js';
import { Auditor } from '../../gateway/audit/auditor.js';
import { AuditPolicy } from '../../gateway/audit/policy.js';
import { parseRequestInfo } from '../../lib/api/requestinfo.js';
import { newExchange } from '../../lib/http/exchange.js';
import type { AuditEvent } from '../../gateway/audit/event.js';

const [log, n, how, via] = process.argv.slice(2) as [string, string, string, string | undefined];
const b = new LogBackend(log, { maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0 });
if (via === 'auditor') {
  const policy = AuditPolicy.parse('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n', 'fixture');
  const auditor = new Auditor({ policy, sinks: [{ backend: b, mode: 'blocking' }], log: () => undefined, maxBodyBytes: 1 << 20 });
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  req.url = '/x';
  req.headers = {};
  for (let i = 0; i < Number(n); i++) {
    auditor
      .begin(newExchange(req, new ServerResponse(req)), parseRequestInfo('GET', '/x', false), { username: 'u', groups: [] }, `id-${i}`, false)!
      .complete(200);
  }
} else {
  for (let i = 0; i < Number(n); i++) {
    void b
      .process([
        {
          kind: 'Event',
          apiVersion: 'audit.k8s.io/v1',
          level: 'Metadata',
          auditID: `id-${i}`,
          stage: 'ResponseComplete',
          requestURI: '/x',
          verb: 'get',
          user: { username: 'u', groups: [] },
          sourceIPs: [],
          requestReceivedTimestamp: 't',
          stageTimestamp: 't',
        } as AuditEvent,
      ])
      .catch(() => undefined);
  }
}
if (how === 'exit') process.exit(0);
throw new Error('the process fails with events not yet written');
