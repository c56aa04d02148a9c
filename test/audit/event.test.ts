// The pieces of an audit event alone: kube's MicroTime timestamps, the
// event's JSON line (kube's field order, the same value as JSON.stringify for
// any string a client can put in it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage } from 'node:http';
import { eventJson, microTime, sourceIPs, userOf, type AuditEvent } from '../../gateway/audit/event.js';

describe('audit event timestamps (microTime)', () => {
  it('of a given performance.now() value are that time', () => {
    const at = performance.now() - 1500;
    const t = microTime(at);
    assert.match(t, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const us = Date.parse(t.slice(0, 23) + 'Z') * 1000 + Number(t.slice(23, 26));
    assert.ok(Math.abs(us - (performance.timeOrigin + at) * 1000) <= 2, `${t} is ${new Date(performance.timeOrigin + at).toISOString()}`);
  });

  it("are kube's MicroTime: UTC to the microsecond, the clock's time, never going back across seconds", async () => {
    const seen: string[] = [];
    const t0 = Date.now();
    for (let i = 0; i < 12; i++) {
      seen.push(microTime());
      await sleep(110); // more than a second in all: the second's prefix is formatted again
    }
    for (const t of seen) assert.match(t, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `${seen[i]} after ${seen[i - 1]}`);
    const first = Date.parse(seen[0]!.slice(0, 23) + 'Z');
    assert.ok(Math.abs(first - t0) < 1000, `${seen[0]} is about ${new Date(t0).toISOString()}`);
    assert.notEqual(seen[0]!.slice(0, 19), seen.at(-1)!.slice(0, 19), 'a later second');
  });
});

describe('audit event JSON (eventJson)', () => {
  const full = (): AuditEvent => {
    const annotations = Object.create(null) as Record<string, string>;
    annotations['authorization.k8s.io/decision'] = 'allow';
    annotations['authorization.k8s.io/reason'] = 'RBAC: allowed by ClusterRoleBinding "x"';
    // Built in another order than kube's on purpose: the line must not follow the object's order.
    const ev = { stageTimestamp: '2026-11-27T10:00:00.000002Z', requestReceivedTimestamp: '2026-11-27T10:00:00.000001Z' } as Partial<AuditEvent>;
    Object.assign(ev, {
      annotations,
      responseObject: { kind: 'ConfigMap', data: { a: 'b' } },
      requestObject: { kind: 'ConfigMap', metadata: { name: 'x' } },
      responseStatus: { metadata: {}, code: 409, status: 'Failure', message: 'exists', reason: 'AlreadyExists', details: { name: 'x' } },
      objectRef: { apiVersion: 'v1', name: 'x', namespace: 'ns', resource: 'configmaps', subresource: 'status', apiGroup: 'g', uid: 'u', resourceVersion: '7' },
      userAgent: 'kubectl/v1.33',
      sourceIPs: ['10.0.0.1', '127.0.0.1'],
      impersonatedUser: { username: 'bob', groups: ['b'] },
      user: { username: 'alice', uid: '1', groups: ['a', 'system:authenticated'], extra: { scopes: ['s'] } },
      verb: 'update',
      requestURI: '/api/v1/namespaces/ns/configmaps/x/status',
      stage: 'ResponseComplete',
      auditID: 'id-1',
      level: 'RequestResponse',
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Event',
    });
    return ev as AuditEvent;
  };

  it("writes the fields in kube's order (the Event struct's), and the same value as JSON.stringify", () => {
    const ev = full();
    const line = eventJson(ev);
    assert.deepEqual(Object.keys(JSON.parse(line)), [
      'kind',
      'apiVersion',
      'level',
      'auditID',
      'stage',
      'requestURI',
      'verb',
      'user',
      'impersonatedUser',
      'sourceIPs',
      'userAgent',
      'objectRef',
      'responseStatus',
      'requestObject',
      'responseObject',
      'requestReceivedTimestamp',
      'stageTimestamp',
      'annotations',
    ]);
    assert.deepEqual(Object.keys(JSON.parse(line).objectRef), [
      'resource',
      'namespace',
      'name',
      'uid',
      'apiGroup',
      'apiVersion',
      'resourceVersion',
      'subresource',
    ]);
    assert.deepEqual(Object.keys(JSON.parse(line).responseStatus), ['metadata', 'status', 'message', 'reason', 'details', 'code']);
    assert.deepEqual(Object.keys(JSON.parse(line).user), ['username', 'uid', 'groups', 'extra']);
    assert.deepEqual(JSON.parse(line), JSON.parse(JSON.stringify(ev)));
  });

  it('leaves out what an event does not have', () => {
    const ev = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'Metadata',
      auditID: 'a',
      stage: 'ResponseComplete',
      requestURI: '/healthz',
      verb: 'get',
      user: { username: 'system:anonymous' },
      sourceIPs: [],
      requestReceivedTimestamp: 't1',
      stageTimestamp: 't2',
    } as unknown as AuditEvent;
    assert.equal(
      eventJson(ev),
      '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a","stage":"ResponseComplete","requestURI":"/healthz","verb":"get","user":{"username":"system:anonymous"},"sourceIPs":[],"requestReceivedTimestamp":"t1","stageTimestamp":"t2"}',
    );
  });

  it('escapes whatever a client puts in a string as JSON.stringify does: quotes, backslashes, controls, lone surrogates, and keeps the rest as it is', () => {
    const nasty = ['"', '\\', 'a"b\\c', '\n\r\t\u0000\u001f', '\u007f', 'é漢字😀', '\ud800', 'x\udfffy', '\u2028\u2029', '</script>', '__proto__', ''];
    for (const s of nasty) {
      const ev = full();
      ev.requestURI = `/api?q=${s}`;
      ev.userAgent = s;
      ev.user = { username: s, groups: [s], uid: s };
      ev.sourceIPs = [s];
      ev.objectRef = { resource: s, name: s };
      ev.annotations = { [s]: s };
      const line = eventJson(ev);
      assert.doesNotMatch(line, /\n/, 'one line');
      assert.deepEqual(JSON.parse(line), JSON.parse(JSON.stringify(ev)), JSON.stringify(s));
      assert.equal(JSON.parse(line).userAgent, s);
    }
  });

  it("one user's requests from other clients, agents or peers each get their own", () => {
    const user = userOf({ username: 'alice', groups: ['a'] });
    const req = (headers: Record<string, string>, peer: string) => ({ headers, socket: { remoteAddress: peer } }) as unknown as IncomingMessage;
    const lines = [
      [req({ 'user-agent': 'kubectl/1' }, '10.0.0.1'), 'kubectl/1'],
      [req({ 'user-agent': 'kubectl/1' }, '10.0.0.1'), 'kubectl/1'],
      [req({ 'user-agent': 'kubectl/2' }, '10.0.0.1'), 'kubectl/2'],
      [req({ 'user-agent': 'kubectl/2' }, '10.0.0.2'), 'kubectl/2'],
      [req({ 'user-agent': 'kubectl/2', 'x-forwarded-for': '1.2.3.4, 5.6.7.8' }, '10.0.0.2'), 'kubectl/2'],
      [req({}, '10.0.0.2'), undefined],
    ] as const;
    const seen = lines.map(([r, ua]) => {
      const ev = {
        kind: 'Event',
        apiVersion: 'audit.k8s.io/v1',
        level: 'Metadata',
        auditID: 'a',
        stage: 'ResponseComplete',
        requestURI: '/',
        verb: 'get',
        user,
        sourceIPs: sourceIPs(r),
        requestReceivedTimestamp: 't1',
        stageTimestamp: 't2',
        ...(ua === undefined ? {} : { userAgent: ua }),
      } as AuditEvent;
      const line = JSON.parse(eventJson(ev)) as Record<string, unknown>;
      assert.deepEqual(line, JSON.parse(JSON.stringify(ev)));
      return [line['sourceIPs'], line['userAgent']];
    });
    assert.deepEqual(seen, [
      [['10.0.0.1'], 'kubectl/1'],
      [['10.0.0.1'], 'kubectl/1'],
      [['10.0.0.1'], 'kubectl/2'],
      [['10.0.0.2'], 'kubectl/2'],
      [['1.2.3.4', '5.6.7.8', '10.0.0.2'], 'kubectl/2'],
      [['10.0.0.2'], undefined],
    ]);
  });
});
