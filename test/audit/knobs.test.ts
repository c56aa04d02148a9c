// kube-apiserver's audit knobs through started servers, each shown to change
// what is written or sent: --audit-log-format=legacy, --audit-log-compress,
// the truncate plugin (log and webhook), the batch throttle (webhook and log),
// the log's batch mode knobs; and their start errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { goQuote, legacyLine } from '../../gateway/audit/legacy.js';
import type { AuditEvent } from '../../gateway/audit/event.js';
import { parseMetrics, samples } from '../helpers/prometheus.js';
import { startAuditReceiver } from './receiver.js';
import { completeLines } from '../helpers/auditlog.js';
import { eventually } from '../helpers/eventually.js';

type Ev = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Configmaps only, one event per request (ResponseComplete); nothing else (probes, /metrics). */
const policy = (level: string) => `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: ${level}
  resources: [{group: '', resources: [configmaps]}]
`;

const lines = completeLines;
const settle = () => new Promise((r) => setTimeout(r, 400));

async function withServer(
  level: string,
  flags: (dir: string) => Promise<string[]> | string[],
  body: (s: TestServer, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-audit-knobs-'));
  await writeFile(join(dir, 'policy.yaml'), policy(level));
  let s: TestServer | undefined;
  try {
    s = await startTestServer({ flags: [`--audit-policy-file=${join(dir, 'policy.yaml')}`, ...(await flags(dir))] });
    await body(s, dir);
  } finally {
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const auditErrors = async (s: TestServer, plugin: string) =>
  Number(samples(parseMetrics((await s.admin.request('GET', '/metrics')).text), 'apiserver_audit_error_total', { plugin })[0]?.value ?? 0);

// kube's audit.EventString layout.
const LEGACY =
  /^(\S+) AUDIT: id="([^"]*)" stage="([^"]*)" ip="([^"]*)" method="([^"]*)" user="([^"]*)" groups="((?:[^"\\]|\\.)*)" as="([^"]*)" asgroups="((?:[^"\\]|\\.)*)" user-agent="((?:[^"\\]|\\.)*)" namespace="([^"]*)" uri="([^"]*)" response="([^"]*)"$/;

describe('--audit-log-format=legacy', () => {
  it("writes kube's one-line text form, read back field by field", async () => {
    await withServer(
      'Metadata',
      (dir) => [`--audit-log-path=${join(dir, 'audit.log')}`, '--audit-log-format=legacy'],
      async (s, dir) => {
        const r = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { 'user-agent': 'knobs "test"/1.0' });
        assert.equal(r.status, 200);
        const imp = await s.admin.request('GET', '/api/v1/namespaces/kube-system/configmaps/x', undefined, {
          'impersonate-user': 'bob',
          'impersonate-group': 'team',
        });
        const file = join(dir, 'audit.log');
        const all = await eventually('two lines', async () => {
          const l = await lines(file);
          return l.length >= 2 ? l : undefined;
        });
        const m = LEGACY.exec(all.find((l) => l.includes(String(r.headers['audit-id'])))!);
        assert.ok(m, `legacy line: ${all[0]}`);
        assert.ok(!Number.isNaN(Date.parse(m[1]!)), 'RFC 3339 time first');
        assert.equal(m[2], r.headers['audit-id']);
        assert.equal(m[3], 'ResponseComplete');
        assert.equal(m[4], '127.0.0.1');
        assert.equal(m[5], 'list');
        assert.equal(m[6], 'admin');
        assert.match(m[7]!, /^\\"system:masters\\"(,\\"[^"\\]+\\")*$/, 'groups as a quoted list, quoted again');
        assert.equal(m[8], '<self>');
        assert.equal(m[9], '<lookup>');
        assert.equal(m[10], 'knobs \\"test\\"/1.0');
        assert.equal(m[11], 'default');
        assert.equal(m[12], '/api/v1/namespaces/default/configmaps');
        assert.equal(m[13], '200');
        const mi = LEGACY.exec(all.find((l) => l.includes(String(imp.headers['audit-id'])))!);
        assert.ok(mi);
        assert.equal(mi[8], 'bob');
        assert.match(mi[9]!, /^\\"team\\"(,\\"system:authenticated\\")?$/);
        assert.equal(mi[11], 'kube-system');
        assert.equal(mi[13], String(imp.status));
        for (const l of all) assert.throws(() => JSON.parse(l), 'no JSON lines');
      },
    );
  });

  it("quotes as Go's %q and marks what is missing as kube does", () => {
    assert.equal(goQuote('a"b\\c\n\x01\x7f\u2028é'), '"a\\"b\\\\c\\n\\x01\\x7f\\u2028é"');
    const ev: AuditEvent = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'Metadata',
      auditID: 'id-1',
      stage: 'RequestReceived',
      requestURI: '/version',
      verb: 'get',
      user: { username: '', groups: [] },
      sourceIPs: [],
      requestReceivedTimestamp: '2026-11-27T08:00:00.120000Z',
      stageTimestamp: '2026-11-27T08:00:00.120000Z',
    };
    assert.equal(
      legacyLine(ev),
      '2026-11-27T08:00:00.12Z AUDIT: id="id-1" stage="RequestReceived" ip="<unknown>" method="get" user="<none>" groups="<none>" as="<self>" asgroups="<lookup>" user-agent="" namespace="<none>" uri="/version" response="<deferred>"',
    );
    assert.match(legacyLine({ ...ev, requestReceivedTimestamp: '2026-11-27T08:00:00.000000Z' }), /^2026-11-27T08:00:00Z AUDIT/);
  });
});

describe('--audit-log-compress', () => {
  it('gzips the rotated logs; their events read back after gunzip', async () => {
    await withServer(
      'RequestResponse',
      (dir) => [`--audit-log-path=${join(dir, 'audit.log')}`, '--audit-log-maxsize=1', '--audit-log-maxbackup=2', '--audit-log-compress'],
      async (s, dir) => {
        const big = 'x'.repeat(200_000);
        for (let i = 0; i < 8; i++) {
          const r = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `big-${i}` },
            data: { big },
          });
          assert.equal(r.status, 201);
          await new Promise((res) => setTimeout(res, 5));
        }
        const gz = await eventually('compressed copies only', async () => {
          const f = (await readdir(dir)).filter((n) => n.startsWith('audit-'));
          return f.length > 0 && f.every((n) => n.endsWith('.log.gz')) ? f : undefined;
        });
        assert.ok(gz.length >= 1 && gz.length <= 2, `kept ${gz.join(', ')}`);
        for (const f of gz) {
          assert.match(f, /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log\.gz$/);
          const raw = await readFile(join(dir, f));
          const text = gunzipSync(raw).toString('utf8');
          assert.ok(raw.length * 10 < text.length, 'compressed');
          const evs = text
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as Ev);
          assert.ok(evs.length > 0 && evs.every((e) => e['kind'] === 'Event' && e['requestObject']['data']['big'] === big));
        }
      },
    );
  });
});

describe('--audit-log-truncate-*', () => {
  it('drops the bodies of an event over max-event-size (annotated), keeps small ones whole, drops one too large even so (counted)', async () => {
    await withServer(
      'RequestResponse',
      (dir) => [`--audit-log-path=${join(dir, 'audit.log')}`, '--audit-log-truncate-enabled', '--audit-log-truncate-max-event-size=4096'],
      async (s, dir) => {
        const file = join(dir, 'audit.log');
        const small = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'small' },
          data: { a: 'b' },
        });
        const large = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'large' },
          data: { a: 'y'.repeat(10_000) },
        });
        assert.equal(small.status, 201);
        assert.equal(large.status, 201);
        const byId = (id: unknown) =>
          eventually(`event ${String(id)}`, async () => (await lines(file)).map((l) => JSON.parse(l) as Ev).find((e) => e['auditID'] === id));
        const se = await byId(small.headers['audit-id']);
        assert.equal(se['requestObject']['data']['a'], 'b');
        assert.equal(se['annotations']?.['audit.k8s.io/truncated'], undefined);
        const le = await byId(large.headers['audit-id']);
        assert.equal(le['requestObject'], undefined);
        assert.equal(le['responseObject'], undefined);
        assert.equal(le['annotations']['audit.k8s.io/truncated'], 'true');
        assert.equal(le['objectRef']['name'], 'large');
        assert.ok(JSON.stringify(le).length <= 4096);
        // Without bodies to drop, a 5 kB request URI stays too large: the event is not written, and is counted.
        const before = await auditErrors(s, 'truncate');
        const huge = await s.admin.request('GET', `/api/v1/namespaces/default/configmaps?pad=${'p'.repeat(5000)}`);
        assert.equal(huge.status, 200, 'the request itself is served');
        await eventually('the dropped event counted', async () => ((await auditErrors(s, 'truncate')) === before + 1 ? true : undefined));
        assert.equal(
          (await lines(file)).some((l) => l.includes(String(huge.headers['audit-id']))),
          false,
        );
      },
    );
  });
});

describe('audit webhook: truncate and throttle', () => {
  it('--audit-webhook-truncate-max-batch-size splits a batch into requests of at most that many bytes', async () => {
    const recv = await startAuditReceiver();
    try {
      await withServer(
        'Metadata',
        async (dir) => [
          `--audit-webhook-config-file=${await recv.kubeconfig(dir)}`,
          '--audit-webhook-batch-max-size=20',
          '--audit-webhook-batch-max-wait=1h',
          '--audit-webhook-truncate-enabled',
          '--audit-webhook-truncate-max-batch-size=3000',
          '--audit-webhook-truncate-max-event-size=3000',
        ],
        async (s) => {
          for (let i = 0; i < 20; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
          // The 20th event fills the batch (by count); truncation sends it as several requests.
          await eventually('the batch of 20', () => (recv.events.length === 20 ? true : undefined));
          const sizes = recv.batches.map((b) => b.reduce((n, j) => n + Buffer.byteLength(j), 0));
          const total = sizes.reduce((a, b) => a + b, 0);
          assert.ok(total > 3000, `the events add up to ${total} bytes`);
          assert.ok(recv.batches.length >= Math.ceil(total / 3000), `${recv.batches.length} requests for ${total} bytes`);
          for (const n of sizes) assert.ok(n <= 3000, `a request of ${n} bytes of events`);
        },
      );
    } finally {
      await recv.close();
    }
  });

  it('--audit-webhook-truncate-max-event-size: a large event reaches the receiver without its bodies, annotated', async () => {
    const recv = await startAuditReceiver();
    try {
      await withServer(
        'Request',
        async (dir) => [
          `--audit-webhook-config-file=${await recv.kubeconfig(dir)}`,
          '--audit-webhook-batch-max-size=1',
          '--audit-webhook-truncate-enabled',
          '--audit-webhook-truncate-max-event-size=3000',
          '--audit-webhook-truncate-max-batch-size=3000',
        ],
        async (s) => {
          const small = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'hook-small' },
          });
          const large = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'hook-large' },
            data: { a: 'z'.repeat(5000) },
          });
          assert.equal(small.status, 201);
          assert.equal(large.status, 201);
          const byId = (id: unknown) => eventually(`event ${String(id)}`, () => recv.events.find((e) => e['auditID'] === id) as Ev | undefined);
          const se = await byId(small.headers['audit-id']);
          assert.equal(se['requestObject']['metadata']['name'], 'hook-small');
          const le = await byId(large.headers['audit-id']);
          assert.equal(le['requestObject'], undefined);
          assert.equal(le['annotations']['audit.k8s.io/truncated'], 'true');
        },
      );
    } finally {
      await recv.close();
    }
  });

  it('--audit-webhook-batch-buffer-size: what a held-back webhook cannot buffer is dropped, counted under plugin="webhook"', async () => {
    const recv = await startAuditReceiver();
    try {
      await withServer(
        'Metadata',
        async (dir) => [
          `--audit-webhook-config-file=${await recv.kubeconfig(dir)}`,
          '--audit-webhook-batch-max-size=1',
          '--audit-webhook-batch-buffer-size=2',
          '--audit-webhook-batch-throttle-qps=0.001',
          '--audit-webhook-batch-throttle-burst=1',
        ],
        async (s) => {
          const before = await auditErrors(s, 'webhook');
          for (let i = 0; i < 6; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
          // One sent (the burst), two buffered, three dropped.
          await eventually('the burst sent', () => (recv.posts === 1 ? true : undefined));
          assert.equal(await auditErrors(s, 'webhook'), before + 3);
        },
      );
      assert.equal(recv.events.length, 3, 'the buffered two go at shutdown');
    } finally {
      await recv.close();
    }
  });

  it('--audit-webhook-batch-throttle-qps/-burst hold batches back without holding requests; shutdown sends the rest; -enable=false lifts it', async () => {
    const recv = await startAuditReceiver();
    try {
      await withServer(
        'Metadata',
        async (dir) => [
          `--audit-webhook-config-file=${await recv.kubeconfig(dir)}`,
          '--audit-webhook-batch-max-size=1',
          '--audit-webhook-batch-throttle-qps=0.001',
          '--audit-webhook-batch-throttle-burst=2',
        ],
        async (s) => {
          for (let i = 0; i < 5; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
          await eventually('the burst', () => (recv.posts === 2 ? true : undefined));
          await settle();
          assert.equal(recv.posts, 2, 'one batch per 1000 s after the burst');
        },
      );
      assert.equal(recv.events.length, 5, 'shutdown sends what the throttle held');
      const posts = recv.posts;
      await withServer(
        'Metadata',
        async (dir) => [
          `--audit-webhook-config-file=${await recv.kubeconfig(dir)}`,
          '--audit-webhook-batch-max-size=1',
          '--audit-webhook-batch-throttle-qps=0.001',
          '--audit-webhook-batch-throttle-burst=2',
          '--audit-webhook-batch-throttle-enable=false',
        ],
        async (s) => {
          for (let i = 0; i < 5; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
          await eventually('five unthrottled batches', () => (recv.posts === posts + 5 ? true : undefined));
        },
      );
    } finally {
      await recv.close();
    }
  });
});

describe('--audit-log-batch-* (--audit-log-mode=batch)', () => {
  it('max-size holds events until a batch is full; max-wait sends a partial one', async () => {
    await withServer(
      'Metadata',
      (dir) => [`--audit-log-path=${join(dir, 'audit.log')}`, '--audit-log-mode=batch', '--audit-log-batch-max-size=5', '--audit-log-batch-max-wait=1h'],
      async (s, dir) => {
        const file = join(dir, 'audit.log');
        for (let i = 0; i < 4; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
        await settle();
        assert.equal((await lines(file)).length, 0, 'four events wait for the fifth');
        assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
        await eventually('the batch of five', async () => ((await lines(file)).length === 5 ? true : undefined));
      },
    );
    await withServer(
      'Metadata',
      (dir) => [`--audit-log-path=${join(dir, 'audit.log')}`, '--audit-log-mode=batch', '--audit-log-batch-max-size=5', '--audit-log-batch-max-wait=50ms'],
      async (s, dir) => {
        assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
        await eventually('a partial batch after max-wait', async () => ((await lines(file(dir))).length === 1 ? true : undefined));
      },
    );
    function file(dir: string) {
      return join(dir, 'audit.log');
    }
  });

  it('a throttled log with a small buffer drops what does not fit, counted under plugin="log"', async () => {
    await withServer(
      'Metadata',
      (dir) => [
        `--audit-log-path=${join(dir, 'audit.log')}`,
        '--audit-log-mode=batch',
        '--audit-log-batch-max-size=1',
        '--audit-log-batch-buffer-size=2',
        '--audit-log-batch-throttle-enable',
        '--audit-log-batch-throttle-qps=0.001',
        '--audit-log-batch-throttle-burst=1',
      ],
      async (s, dir) => {
        const before = await auditErrors(s, 'log');
        for (let i = 0; i < 6; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
        // One written at once (the burst), two buffered, three dropped.
        await eventually('the burst written', async () => ((await lines(join(dir, 'audit.log'))).length === 1 ? true : undefined));
        assert.equal(await auditErrors(s, 'log'), before + 3);
      },
    );
  });
});

describe('audit knob errors', () => {
  const err = (argv: string[]) => {
    const r = parseServeFlags(argv);
    return 'error' in r ? r.error : '';
  };
  it('names the flag', () => {
    const hook = ['--audit-webhook-config-file=k.yaml'];
    assert.match(
      err([...hook, '--audit-webhook-batch-throttle-qps=0']),
      /--audit-webhook-batch-throttle-qps must be a positive number when --audit-webhook-batch-throttle-enable is true/,
    );
    assert.equal(err([...hook, '--audit-webhook-batch-throttle-qps=0', '--audit-webhook-batch-throttle-enable=false']), '');
    assert.equal(err([...hook, '--audit-webhook-batch-throttle-qps=0', '--audit-webhook-mode=blocking']), '', 'the throttle is not checked outside batch mode');
    assert.match(err([...hook, '--audit-webhook-batch-throttle-qps=fast']), /invalid value "fast" for --audit-webhook-batch-throttle-qps/);
    assert.match(
      err(['--audit-log-path=x', '--audit-log-mode=batch', '--audit-log-batch-throttle-enable']),
      /--audit-log-batch-throttle-qps must be a positive number.*--audit-log-batch-throttle-burst must be a positive number/,
    );
    assert.match(
      err(['--audit-log-path=x', '--audit-log-truncate-max-event-size=2000', '--audit-log-truncate-max-batch-size=1000']),
      /--audit-log-truncate-max-batch-size must not be smaller than --audit-log-truncate-max-event-size/,
    );
    assert.match(
      err(['--audit-log-path=x', '--audit-log-truncate-max-event-size=0']),
      /invalid value "0" for --audit-log-truncate-max-event-size: must be a positive number of bytes/,
    );
    assert.match(
      err(['--audit-log-path=x', '--audit-log-version=audit.k8s.io/v1beta1']),
      /invalid value "audit.k8s.io\/v1beta1" for --audit-log-version: must be one of audit.k8s.io\/v1/,
    );
    assert.match(
      err(['--audit-log-compress', '--audit-webhook-truncate-enabled']),
      /--audit-log-compress requires --audit-log-path.*--audit-webhook-truncate-enabled requires --audit-webhook-config-file/,
    );
  });

  it("kube's defaults", () => {
    const r = parseServeFlags([]);
    assert.ok('options' in r);
    const o = r.options;
    assert.deepEqual(
      [o.auditLogFormat, o.auditLogCompress, o.auditLogMode, o.auditLogBatchBufferSize, o.auditLogBatchMaxSize, o.auditLogBatchThrottleEnable],
      ['json', false, 'blocking', 10000, 1, false],
    );
    assert.deepEqual(
      [
        o.auditWebhookMode,
        o.auditWebhookBatchBufferSize,
        o.auditWebhookBatchMaxSize,
        o.auditWebhookBatchMaxWaitMs,
        o.auditWebhookBatchThrottleEnable,
        o.auditWebhookBatchThrottleQps,
        o.auditWebhookBatchThrottleBurst,
      ],
      ['batch', 10000, 400, 30_000, true, 10, 15],
    );
    for (const p of ['Log', 'Webhook'] as const) {
      assert.equal(o[`audit${p}TruncateEnabled`], false);
      assert.equal(o[`audit${p}TruncateMaxEventSize`], 100 * 1024);
      assert.equal(o[`audit${p}TruncateMaxBatchSize`], 10 * 1024 * 1024);
      assert.equal(o[`audit${p}Version`], 'audit.k8s.io/v1');
    }
  });
});
