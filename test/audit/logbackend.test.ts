// The audit log's writes (gateway/audit/logbackend.ts): events gathered into
// few writes, every line there and whole; an event someone waits for written
// without the coalescing wait; what is gathered written when the process
// exits or dies of an uncaught error; a write that fails rejects the events'
// promises, and through a server counts them in apiserver_audit_error_total.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COALESCE_MS, LogBackend } from '../../gateway/audit/logbackend.js';
import type { AuditEvent } from '../../gateway/audit/event.js';
import { startTestServer } from '../helpers/server.js';
import { parseMetrics, samples } from '../helpers/prometheus.js';

const event = (id: string): AuditEvent => ({
  kind: 'Event',
  apiVersion: 'audit.k8s.io/v1',
  level: 'Metadata',
  auditID: id,
  stage: 'ResponseComplete',
  requestURI: '/api/v1/namespaces',
  verb: 'list',
  user: { username: 'u', groups: ['g'] },
  sourceIPs: ['127.0.0.1'],
  requestReceivedTimestamp: 't',
  stageTimestamp: 't',
});
const noRotation = { maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0 };
const ids = async (file: string) =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as AuditEvent).auditID);

async function inDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-auditlog-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the audit log backend', () => {
  it('gathers the events of many requests into few writes, each line whole and in order', async () =>
    inDir(async (dir) => {
      const file = join(dir, 'audit.log');
      const b = new LogBackend(file, noRotation);
      const writes: number[] = [];
      // Spread over turns, as requests come: 500 events, 10 per turn.
      const done: Promise<void>[] = [];
      for (let t = 0; t < 50; t++) {
        for (let i = 0; i < 10; i++) done.push(b.process([event(`e${t * 10 + i}`)]));
        await new Promise((r) => setImmediate(r));
        writes.push((await readFile(file, 'utf8')).split('\n').length - 1);
      }
      await Promise.all(done);
      assert.deepEqual(
        await ids(file),
        Array.from({ length: 500 }, (_, i) => `e${i}`),
      );
      // Distinct promises are distinct writes: events of one write share it.
      assert.ok(new Set(done).size < 50, `${new Set(done).size} writes for 500 events over 50 turns`);
      await b.shutdown();
    }));

  it('keeps lines whole when they pass the buffer, in any script, and while a write is in flight', async () =>
    inDir(async (dir) => {
      const file = join(dir, 'audit.log');
      const b = new LogBackend(file, noRotation);
      // Multi-byte UTF-8 (2, 3 and 4 bytes a character) and lines larger than the 512 KiB buffer: it grows, never cuts.
      const texts = ['plain', 'é'.repeat(1000), '€'.repeat(200_000), '😀'.repeat(150_000), 'x'.repeat(1_500_000), 'after'];
      const sent: Promise<void>[] = [];
      for (const [i, t] of texts.entries()) {
        sent.push(b.process([{ ...event(`e${i}`), annotations: { note: t } }]));
        // The second half arrives while the first write is in flight: it goes to the other buffer.
        if (i === 2) await new Promise((r) => setImmediate(r));
      }
      await Promise.all(sent);
      const lines = (await readFile(file, 'utf8'))
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as AuditEvent);
      assert.deepEqual(
        lines.map((e) => e.auditID),
        texts.map((_, i) => `e${i}`),
      );
      assert.deepEqual(
        lines.map((e) => e.annotations?.['note']),
        texts,
      );
      await b.shutdown();
    }));

  it("writes an event someone waits for (a blocking mode's RequestReceived) at the end of the turn, with what was gathered before it", async () =>
    inDir(async (dir) => {
      const file = join(dir, 'audit.log');
      const b = new LogBackend(file, noRotation);
      const later = b.process([event('gathered')]);
      const waited = b.process([event('waited')], true);
      assert.equal(later, waited, 'one write');
      await waited;
      assert.deepEqual(await ids(file), ['gathered', 'waited']);
      await b.shutdown();
    }));

  it('writes what is gathered at shutdown, and refuses events after it', async () =>
    inDir(async (dir) => {
      const file = join(dir, 'audit.log');
      const b = new LogBackend(file, noRotation);
      for (let i = 0; i < 20; i++) void b.process([event(`s${i}`)]);
      await b.shutdown();
      assert.equal((await ids(file)).length, 20);
      await assert.rejects(b.process([event('late')]), /closed/);
    }));

  for (const [how, via] of [
    ['exit', 'log'],
    ['throw', 'log'],
    ['exit', 'auditor'],
    ['throw', 'auditor'],
  ] as const) {
    it(`writes what is gathered when the process ends at once (${how === 'exit' ? 'process.exit' : 'an uncaught error'}) within ${COALESCE_MS} ms of the events${via === 'auditor' ? ', with the events an auditor holds for the end of the turn' : ''}`, async () =>
      inDir(async (dir) => {
        const file = join(dir, 'audit.log');
        const fixture = fileURLToPath(new URL('./exitwriter.ts', import.meta.url));
        const r = spawnSync(process.execPath, ['--import', 'tsx', fixture, file, '300', how, via], { encoding: 'utf8' });
        assert.equal(r.status, how === 'exit' ? 0 : 1, r.stderr);
        assert.deepEqual(
          await ids(file),
          Array.from({ length: 300 }, (_, i) => `id-${i}`),
        );
      }));
  }

  it('rejects the events of a write that fails (a full disk: /dev/full)', async () => {
    const b = new LogBackend('/dev/full', noRotation);
    const p = b.process([event('lost')]);
    await assert.rejects(p, /ENOSPC/);
    await b.shutdown().catch(() => undefined);
  });

  it('counts events whose write failed in apiserver_audit_error_total{plugin="log"}, and serves the requests (blocking mode)', async () =>
    inDir(async (dir) => {
      const policyFile = join(dir, 'policy.yaml');
      await writeFile(
        policyFile,
        'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n  resources: [{group: "", resources: [configmaps]}]\n',
      );
      const s = await startTestServer({ flags: [`--audit-policy-file=${policyFile}`, '--audit-log-path=/dev/full'] });
      try {
        for (let i = 0; i < 5; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
        let lost = 0;
        for (let i = 0; i < 200 && lost < 5; i++) {
          lost = Number(
            samples(parseMetrics((await s.admin.request('GET', '/metrics')).text), 'apiserver_audit_error_total', { plugin: 'log' })[0]?.value ?? 0,
          );
          if (lost < 5) await new Promise((r) => setTimeout(r, 25));
        }
        assert.equal(lost, 5);
      } finally {
        await s.close();
      }
    }));
});
