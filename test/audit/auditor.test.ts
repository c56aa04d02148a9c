// The Auditor's hand-off of finished requests' events to its sinks: the
// ResponseComplete events of one event-loop turn go to each sink together,
// after that turn (its answers are written first: lib/http/turnend.ts), each
// stamped when its request completed; shutdown hands over what is pending.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { Auditor } from '../../gateway/audit/auditor.js';
import { AuditPolicy } from '../../gateway/audit/policy.js';
import type { AuditBackend } from '../../gateway/audit/backend.js';
import type { AuditEvent } from '../../gateway/audit/event.js';
import { parseRequestInfo } from '../../lib/api/requestinfo.js';
import { newExchange } from '../../lib/http/exchange.js';

function recorder(): { backend: AuditBackend; calls: AuditEvent[][]; shutdowns: number } {
  const r = {
    calls: [] as AuditEvent[][],
    shutdowns: 0,
    backend: {
      plugin: 'log',
      process: (evs: readonly AuditEvent[]) => {
        r.calls.push([...evs]);
        return Promise.resolve();
      },
      shutdown: () => {
        r.shutdowns++;
        return Promise.resolve();
      },
    } as AuditBackend,
  };
  return r;
}

function request(path: string): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  req.url = path;
  req.headers = {};
  return { req, res: new ServerResponse(req) };
}

const policy = (stages = '[RequestReceived]') =>
  AuditPolicy.parse(`apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: ${stages}\nrules:\n- level: Metadata\n`, 'test');
const user = { username: 'alice', groups: ['system:authenticated'] };

function finish(auditor: Auditor, name: string, code: number): void {
  const path = `/api/v1/namespaces/ns/configmaps/${name}`;
  const { req, res } = request(path);
  const a = auditor.begin(newExchange(req, res), parseRequestInfo('GET', path, false), user, `id-${name}`, false)!;
  a.received();
  a.complete(code);
}

describe('audit: finished requests handed to the sinks', () => {
  it('once per turn, all of that turn together, after it; each stamped when it completed', async () => {
    const r = recorder();
    const auditor = new Auditor({ policy: policy(), sinks: [{ backend: r.backend, mode: 'blocking' }], log: () => undefined, maxBodyBytes: 1 << 20 });
    finish(auditor, 'a', 200);
    // Time passes within the turn (a busy answer), so that the stamps show when each request completed.
    const spin = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    spin(5);
    finish(auditor, 'b', 404);
    finish(auditor, 'c', 200);
    assert.equal(r.calls.length, 0, 'nothing handed over during the turn');
    await turn();
    assert.equal(r.calls.length, 1);
    assert.deepEqual(
      r.calls[0]!.map((e) => [e.auditID, e.stage, e.responseStatus?.code]),
      [
        ['id-a', 'ResponseComplete', 200],
        ['id-b', 'ResponseComplete', 404],
        ['id-c', 'ResponseComplete', 200],
      ],
    );
    // MicroTime to Date (µs dropped): stamped at completion, 5 ms apart; stamped when handed over, they would be the same.
    const [a, b] = r.calls[0]!.map((e) => Date.parse(`${e.stageTimestamp.slice(0, 23)}Z`));
    assert.ok(b! - a! >= 4, `stamped when each completed: ${r.calls[0]!.map((e) => e.stageTimestamp).join(', ')}`);
    finish(auditor, 'd', 200);
    await turn();
    assert.equal(r.calls.length, 2, 'a later turn is a later hand-off');
    assert.deepEqual(
      r.calls[1]!.map((e) => e.auditID),
      ['id-d'],
    );
  });

  it('every sink gets the same events; an omitted ResponseComplete is not handed over', async () => {
    const r1 = recorder();
    const r2 = recorder();
    const auditor = new Auditor({
      policy: policy(),
      sinks: [
        { backend: r1.backend, mode: 'blocking' },
        { backend: r2.backend, mode: 'blocking-strict' },
      ],
      log: () => undefined,
      maxBodyBytes: 1 << 20,
    });
    finish(auditor, 'a', 200);
    await turn();
    assert.deepEqual(r1.calls, r2.calls);
    const quiet = recorder();
    const none = new Auditor({
      policy: policy('[RequestReceived, ResponseComplete]'),
      sinks: [{ backend: quiet.backend, mode: 'blocking' }],
      log: () => undefined,
      maxBodyBytes: 1 << 20,
    });
    finish(none, 'a', 200);
    await turn();
    assert.equal(quiet.calls.length, 0);
  });

  it('shutdown hands over what is pending before the sinks shut down', async () => {
    const r = recorder();
    const order: string[] = [];
    const backend: AuditBackend = {
      plugin: 'log',
      process: (evs) => {
        order.push(`process ${evs.length}`);
        return r.backend.process(evs);
      },
      shutdown: () => {
        order.push('shutdown');
        return Promise.resolve();
      },
    };
    const auditor = new Auditor({ policy: policy(), sinks: [{ backend, mode: 'blocking' }], log: () => undefined, maxBodyBytes: 1 << 20 });
    finish(auditor, 'a', 200);
    finish(auditor, 'b', 200);
    await auditor.shutdown();
    assert.deepEqual(order, ['process 2', 'shutdown']);
    await turn();
    assert.deepEqual(order, ['process 2', 'shutdown'], 'nothing handed over twice');
  });
});
