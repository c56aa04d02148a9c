// Micro-benchmarks of the small optimizations that each keep a comment with
// their figure: the field manager's ASCII fast path, SortedKeys, direct
// EVALSHA, the two service-account signature schedules — and of one that lost
// its place (the Redis write reusing its JSON for the answer). Each is timed in
// this process beside the plain way (or both modes), median of 5 rounds. `node --import tsx bench/micro.ts [section…]`
// (sections: useragent, sortedkeys, writejson, evalsha, signature, writehead, audit, auditlog, forwardhead, hopbyhop, watchencode, backendtls); run.ts
// runs it pinned to CPU 0 (BENCH_MICRO=0 skips it).
import { performance } from 'node:perf_hooks';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { KObject } from '../lib/api/meta.js';
import { rememberJson, toJson } from '../lib/api/json.js';
import { managerFromUserAgent } from '../lib/fieldmanager/index.js';
import { SortedKeys } from '../backends/core/store/sortedkeys.js';
import { lowerBound } from '../backends/core/store/keys.js';
import { restamp, storedCopy } from '../backends/core/store/objects.js';
import { runScript, WRITE_SCRIPT } from '../backends/core/store/redis-scripts.js';
import { typeKeys } from '../backends/core/store/redis-keys.js';
import { ServiceAccountJwtVerifier } from '../gateway/authn/serviceaccount.js';
import { BearerToken } from '../gateway/authn/token.js';
import { keyId } from '../lib/serviceaccount/keys.js';
import { TokenSigner } from '../lib/serviceaccount/signer.js';
import { boundClaims } from '../lib/serviceaccount/claims.js';
import { drop } from './redis.js';
import { carryHeader, writeHeadWith } from '../lib/http/carried.js';
import { newExchange } from '../lib/http/exchange.js';
import { Auditor } from '../gateway/audit/auditor.js';
import { AuditPolicy } from '../gateway/audit/policy.js';
import { eventJson, type AuditEvent } from '../gateway/audit/event.js';
import { parseRequestInfo } from '../lib/api/requestinfo.js';
import { auditedGet, fresh, URL } from './auditedget.mjs';
import { identityHead, identityPairs } from '../gateway/aggregation/identity.js';
import { isHopByHop, setsName } from '../gateway/aggregation/forwardrules.js';
import { watchEncoders } from '../backends/core/watchevents.js';
import { encodeThroughMaps, SELF_DESCRIBED, splicedMap } from '../lib/cbor/encode.js';
import { messageFromJson } from '../lib/protobuf/from-json.js';
import { planFor, planForKind } from '../lib/protobuf/registry.js';
import { MAGIC } from '../lib/protobuf/envelope.js';

const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const row = (what: string, value: string) => console.log(`  ${what.padEnd(60)} ${value}`);
const fmt = (ns: number) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);

/** Nanoseconds per call of fn over n calls, median of ROUNDS rounds (the first call of each round included). */
function nsPerCall(n: number, fn: (i: number) => unknown): number {
  const times: number[] = [];
  let sink: unknown;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sink = fn(i);
    times.push(((performance.now() - t0) * 1e6) / n);
  }
  if (sink === Symbol.for('never')) console.log('');
  return median(times);
}

/**
 * The first watch event of a stored ConfigMap (as the bench's encodings watch makes them: created
 * through the API, so with a managedFields entry) in each encoding, each object encoded once
 * (later watchers copy the event): JSON reuses the text the create's answer made; protobuf and CBOR
 * through their writers (lib/protobuf/writer.ts, lib/cbor/writer.ts) and through the roads those
 * replaced (protobufjs's message objects; sorted Maps for cbor-x). CPU time (the machine is
 * shared), median of 7 rounds of 2,000 objects, the encodings alternated within each round.
 */
function watchEncode(): void {
  console.log('\nthe first watch event of a stored ConfigMap, per encoding (backends/core/watchevents.ts)');
  const stored = (i: number): KObject => {
    const o = storedCopy({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `w-${String(i).padStart(4, '0')}`,
        namespace: 'bench-watch-encodings',
        uid: randomUUID(),
        resourceVersion: String(1000 + i),
        creationTimestamp: '2026-11-29T16:00:00Z',
        labels: { app: 'bench', tier: 'backend' },
        managedFields: [
          {
            manager: 'loadgen',
            operation: 'Update',
            apiVersion: 'v1',
            time: '2026-11-29T16:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { '.': {}, 'f:app.properties': {}, 'f:mode': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } } },
          },
        ],
      },
      data: { 'app.properties': 'greeting=hello\nlog.level=info\nfeature.flags=a,b,c\n', mode: 'fast' },
    } as KObject);
    toJson(o); // the create's answer made its JSON
    return o;
  };
  const plan = planForKind('v1', 'ConfigMap')!;
  const unknown = planFor('runtime.Unknown').type;
  const watchEvent = planFor('meta.WatchEvent').type;
  const ways: Record<string, (o: KObject) => unknown> = {
    JSON: (o) => watchEncoders.json('ADDED', o),
    protobuf: (o) => watchEncoders.protobuf('ADDED', o),
    'protobuf (protobufjs road)': (o) => {
      const raw = plan.type.encode(messageFromJson(plan, o, 'ConfigMap')).finish();
      const env = Buffer.concat([
        MAGIC,
        unknown.encode({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, raw, contentEncoding: '', contentType: '' }).finish(),
      ]);
      const ev = watchEvent.encode({ type: 'ADDED', object: { raw: env } }).finish();
      const head = Buffer.allocUnsafe(4);
      head.writeUInt32BE(ev.length);
      return Buffer.concat([head, ev]);
    },
    CBOR: (o) => watchEncoders.cbor('ADDED', o),
    'CBOR (sorted Maps road)': (o) =>
      Buffer.concat([
        SELF_DESCRIBED,
        ...splicedMap([
          ['type', encodeThroughMaps('ADDED')],
          ['object', encodeThroughMaps(o)],
        ]),
      ]),
  };
  const names = Object.keys(ways);
  const times = new Map<string, number[]>(names.map((n) => [n, []]));
  const N = 2000;
  for (let r = 0; r < 7; r++) {
    for (const name of r % 2 ? [...names].reverse() : names) {
      const objs = Array.from({ length: N }, (_, i) => stored(i));
      const way = ways[name]!;
      const t0 = process.cpuUsage();
      for (let i = 0; i < N; i++) way(objs[i]!);
      const t = process.cpuUsage(t0);
      times.get(name)!.push(((t.user + t.system) * 1e3) / N);
    }
  }
  const json = median(times.get('JSON')!);
  for (const name of names) {
    const ns = median(times.get(name)!);
    row(name, `${fmt(ns)} CPU per event = ${((100 * ns) / json).toFixed(0)}% of JSON`);
  }
}

function userAgent(): void {
  console.log('\nfield manager from User-Agent (lib/fieldmanager/index.ts)');
  const ascii = 'kubectl/v1.33.1 (linux/amd64) kubernetes/8adc0f0';
  const other = 'kubectl\u00b7/v1.33.1 (linux/amd64) kubernetes/8adc0f0'; // one non-ASCII character: the per-character path
  row('printable ASCII agent (fast path)', fmt(nsPerCall(200_000, () => managerFromUserAgent(ascii))));
  row('same agent with one non-ASCII character (per-character path)', fmt(nsPerCall(50_000, () => managerFromUserAgent(other))));
}

function sortedKeys(): void {
  console.log('\nSortedKeys against one flat sorted array: a random insert and its removal (backends/core/store/sortedkeys.ts)');
  for (const size of [10_000, 50_000, 150_000]) {
    const keys = Array.from({ length: size }, (_, i) => `core/configmaps/ns-${i % 100}/cm-${randomBytes(6).toString('hex')}`).sort();
    const extra = Array.from({ length: 2000 }, () => `core/configmaps/ns-${Math.floor(Math.random() * 100)}/x-${randomBytes(6).toString('hex')}`);
    const chunked = new SortedKeys(keys);
    const flat = keys.slice();
    const n = extra.length;
    const c = nsPerCall(n, (i) => {
      chunked.insert(extra[i]!);
      return chunked.remove(extra[i]!);
    });
    const f = nsPerCall(n, (i) => {
      const k = extra[i]!;
      const at = lowerBound(flat, k);
      flat.splice(at, 0, k);
      flat.splice(lowerBound(flat, k), 1);
      return at;
    });
    row(`${size.toLocaleString('en')} keys: SortedKeys / flat array`, `${fmt(c)} / ${fmt(f)}`);
  }
}

/**
 * What the Redis write used to do (storedJson, removed): serialize metadata apart from the
 * other members, send the text, and splice resourceVersion into it for the answer's JSON.
 */
function splicedJson(stored: KObject): { json: string; stamp(rev: number): KObject } {
  let head = '{';
  let meta = '';
  let tail = '';
  let sep = '';
  for (const k of Object.keys(stored)) {
    const name = `${sep}${JSON.stringify(k)}:`;
    sep = ',';
    if (k === 'metadata') {
      head += name;
      meta = JSON.stringify(stored.metadata);
    } else if (meta) tail += name + JSON.stringify(stored[k]);
    else head += name + JSON.stringify(stored[k]);
  }
  tail += '}';
  return {
    json: head + meta + tail,
    stamp: (rev) => {
      const out = restamp(stored, rev);
      if (meta) rememberJson(out, `${head}${meta.slice(0, -1)}${meta.length > 2 ? ',' : ''}"resourceVersion":"${rev}"}${tail}`);
      return out;
    },
  };
}

function storedJsonReuse(): void {
  console.log("\na Redis write's JSON and its answer's: JSON.stringify twice (backends/core/store/redis.ts) against the removed splicing");
  const cm = (i: number): KObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i}`, namespace: 'bench', uid: randomUUID(), creationTimestamp: '2026-01-01T00:00:00Z', labels: { app: 'bench', tier: 'backend' } },
    data: { 'app.properties': 'greeting=hello\nlog.level=info\nfeature.flags=a,b,c\n', mode: 'fast' },
  });
  const objs = Array.from({ length: 2000 }, (_, i) => cm(i));
  const reuse = nsPerCall(objs.length, (i) => {
    const s = splicedJson(storedCopy(objs[i]!));
    return toJson(s.stamp(i + 1)).length + s.json.length;
  });
  const twice = nsPerCall(objs.length, (i) => {
    const stored = storedCopy(objs[i]!);
    const json = JSON.stringify(stored);
    return toJson(restamp(stored, i + 1)).length + json.length;
  });
  row('a small ConfigMap written and answered: stringify twice / spliced', `${fmt(twice)} / ${fmt(reuse)}`);
}

async function evalsha(): Promise<void> {
  console.log('\nthe write script: EVALSHA directly against ioredis defineCommand, client CPU per write (backends/core/store/redis-scripts.ts)');
  const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableAutoPipelining: true });
  try {
    await client.connect();
  } catch (err) {
    row('skipped: Redis unreachable', String(err instanceof Error ? err.message : err));
    client.disconnect();
    return;
  }
  const prefix = `gh-bench-micro-${randomBytes(4).toString('hex')}`;
  const type = 'core/configmaps/';
  const keys = typeKeys(prefix, type);
  const json = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'bench' }, data: { a: 'b' } });
  client.defineCommand('ghMicroWrite', { numberOfKeys: 6, lua: WRITE_SCRIPT.lua });
  const keyList = [keys.rev, keys.last, keys.feed, keys.types, keys.objectsStem + type, keys.indexStem + type];
  const argsOf = (name: string) => ['c', `${type}bench/${name}`, json, '', String(Date.now()), type, '0'];
  const viaDefine = (name: string) => (client as unknown as Record<string, (...a: string[]) => Promise<unknown>>)['ghMicroWrite']!(...keyList, ...argsOf(name));
  const direct = (name: string) => runScript(client, WRITE_SCRIPT, keyList, argsOf(name));
  /** Client CPU µs per write over n writes, 64 in flight. */
  const cpuPerWrite = async (tag: string, write: (name: string) => Promise<unknown>, n: number): Promise<number> => {
    let next = 0;
    const c0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < n) await write(`${tag}-${next++}`);
      }),
    );
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / n;
  };
  try {
    await cpuPerWrite('warm-a', direct, 2000);
    await cpuPerWrite('warm-b', viaDefine, 2000);
    const a: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      a.push(await cpuPerWrite(`d${r}`, direct, 5000));
      b.push(await cpuPerWrite(`s${r}`, viaDefine, 5000));
    }
    row('client CPU per create: EVALSHA directly / defineCommand', `${median(a).toFixed(1)} µs / ${median(b).toFixed(1)} µs`);
  } finally {
    await drop(client, prefix);
    client.disconnect();
  }
}

async function signature(): Promise<void> {
  console.log(`\nservice-account signature checks, all misses, 32 in flight, ${availableParallelism()} usable core(s) (gateway/authn/jwssignature.ts)`);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const signer = new TokenSigner(privateKey);
  const tokens = await Promise.all(
    Array.from({ length: 4000 }, (_, i) =>
      signer.sign(
        boundClaims({
          issuer,
          audiences: [issuer],
          now: Date.now(),
          expirationSeconds: 3600,
          jti: randomUUID(),
          namespace: 'default',
          serviceAccount: { name: `sa-${i}`, uid: randomUUID() },
        }),
      ),
    ),
  );
  const keys = [{ kid: keyId(publicKey), key: publicKey, algorithms: ['RS256'] }];
  for (const mode of ['loop', 'pool'] as const) {
    const verifier = new ServiceAccountJwtVerifier({ keys, issuers: [issuer], apiAudiences: [issuer], signatureThreads: mode });
    const perCheck: number[] = [];
    const rates: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const batch = tokens.slice((r % 4) * 1000, (r % 4) * 1000 + 1000).map((t) => new BearerToken(t));
      let next = 0;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < batch.length) {
            const r2 = await verifier.authenticateToken(batch[next++]!, [issuer]);
            if (!r2) throw new Error('token refused');
          }
        }),
      );
      const wall = performance.now() - t0;
      const c = process.cpuUsage(c0);
      perCheck.push((c.user + c.system) / batch.length);
      rates.push(batch.length / (wall / 1000));
    }
    row(`'${mode}': process CPU per check, checks/s`, `${median(perCheck).toFixed(1)} µs, ${median(rates).toFixed(0)}/s`);
  }
}

function writeHead(): void {
  console.log("\nAn answer's headers: set with setHeader before writeHead, or carried into it (lib/http/carried.ts)");
  const req = new IncomingMessage(new Socket());
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.method = 'GET';
  const base = (): Record<string, string | number> => ({ 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Content-Length': 1234 });
  const audit = randomUUID();
  const fs = randomUUID();
  const pl = randomUUID();
  const cases: [string, (r: ServerResponse) => void][] = [
    [
      'writeHead with 3 headers, nothing set before',
      (r) => {
        r.writeHead(200, base());
      },
    ],
    [
      '+ setHeader(Audit-Id)',
      (r) => {
        r.setHeader('Audit-Id', audit);
        r.writeHead(200, base());
      },
    ],
    [
      "+ setHeader(Audit-Id) and APF's two",
      (r) => {
        r.setHeader('Audit-Id', audit);
        r.setHeader('X-Kubernetes-PF-FlowSchema-UID', fs);
        r.setHeader('X-Kubernetes-PF-PriorityLevel-UID', pl);
        r.writeHead(200, base());
      },
    ],
    [
      '+ Audit-Id carried',
      (r) => {
        // The gateway's context is the exchange; made here only because the bench has none.
        const x = newExchange(req, r);
        carryHeader(x, 'Audit-Id', audit);
        writeHeadWith(x, 200, base());
      },
    ],
    [
      "+ Audit-Id and APF's two carried",
      (r) => {
        const x = newExchange(req, r);
        carryHeader(x, 'Audit-Id', audit);
        carryHeader(x, 'X-Kubernetes-PF-FlowSchema-UID', fs);
        carryHeader(x, 'X-Kubernetes-PF-PriorityLevel-UID', pl);
        writeHeadWith(x, 200, base());
      },
    ],
  ];
  for (const [what, f] of cases)
    row(
      `${what} (a new ServerResponse each)`,
      fmt(
        nsPerCall(200_000, () => {
          const r = new ServerResponse(req);
          f(r);
          return r;
        }),
      ),
    );
}

/** The audit work of one Metadata-audited GET (the audit's ≥ 90%-of-off target): the recording, its event, and the event's JSON line, in this process. */
async function auditRequest(): Promise<void> {
  console.log("\nOne Metadata-audited GET's audit work (gateway/audit), RequestReceived omitted as in the Audit section");
  const { req, user, renew } = auditedGet();
  const info = parseRequestInfo('GET', URL, false);
  const kept = Promise.resolve();
  const events: AuditEvent[] = [];
  const backend = {
    plugin: 'log',
    process(evs: readonly AuditEvent[]) {
      if (events.length === 0) events.push(evs[0]!);
      return kept;
    },
    shutdown: () => kept,
  };
  const policy = AuditPolicy.parse('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n', 'bench');
  const auditor = new Auditor({ policy, sinks: [{ backend, mode: 'blocking' }], log: () => undefined, maxBodyBytes: 1 << 20 });
  // One response for every request: its making is not the audit's work.
  const x = newExchange(req, new ServerResponse(req));
  // The events reach the sinks after the event-loop turn (Auditor.emitLater), so the line is timed on its own below;
  // bench/audit-turns.mjs times the whole, log included, 20 requests per turn.
  row(
    'recording and event',
    fmt(
      nsPerCall(100_000, () => {
        // A request's strings are new each time, as parsed from the socket.
        renew();
        const a = auditor.begin(x, info, user, fresh(randomUUID()), false)!;
        a.annotate('authentication.gatehouse.dev/authenticator', 'x509');
        a.received();
        a.annotate('authorization.k8s.io/decision', 'allow');
        a.annotate('authorization.k8s.io/reason', 'RBAC: allowed by ClusterRoleBinding "cg" of ClusterRole "view" to Group "cg"');
        a.complete(200);
        return a;
      }),
    ),
  );
  await new Promise((r) => setImmediate(r));
  const event = events[0]!;
  let line = '';
  row('its JSON line (eventJson)', fmt(nsPerCall(100_000, () => (line = eventJson(event)))));
  row('the line (bytes)', String(line.length));
}

/**
 * The log backend's CPU per event (the line, its encoding, the writes on the
 * thread pool), events handed over 20 per event-loop turn as requests do.
 */
async function auditLog(): Promise<void> {
  console.log('\nThe audit log (gateway/audit/logbackend.ts): process CPU per Metadata event written to a file, 200,000 events, 20 per turn');
  const { LogBackend } = await import('../gateway/audit/logbackend.js');
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-micro-audit-'));
  const event = (i: number): AuditEvent => ({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: randomUUID(),
    stage: 'ResponseComplete',
    requestURI: `/api/v1/namespaces/bench/configmaps/c${i % 10}`,
    verb: 'get',
    user: { username: 'cg-user', groups: ['cg', 'system:authenticated'] },
    sourceIPs: ['127.0.0.1'],
    userAgent: 'kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef',
    objectRef: { resource: 'configmaps', namespace: 'bench', name: `c${i % 10}`, apiVersion: 'v1' },
    responseStatus: { metadata: {}, code: 200 },
    requestReceivedTimestamp: '2026-11-27T17:00:00.000001Z',
    stageTimestamp: '2026-11-27T17:00:00.000301Z',
    annotations: {
      'authorization.k8s.io/decision': 'allow',
      'authorization.k8s.io/reason': 'RBAC: allowed by ClusterRoleBinding "cg" of ClusterRole "view" to Group "cg"',
    },
  });
  const n = 200_000;
  const perEvent: number[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const log = new LogBackend(join(dir, `audit-${r}.log`), { maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0 });
      const c0 = process.cpuUsage();
      for (let i = 0; i < n; i += 20) {
        for (let k = 0; k < 20; k++) void log.process([event(i + k)]);
        await new Promise((done) => setImmediate(done));
      }
      await log.shutdown();
      const c = process.cpuUsage(c0);
      perEvent.push((c.user + c.system) / n);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  row('process CPU per event (making the event included)', `${median(perEvent).toFixed(2)} µs`);
}

/**
 * A new connection to a backend with the gateway's outbound TLS (gateway/aggregation/transport.ts
 * `backendTls`: the CA, the front-proxy client certificate and key) given as PEM text (tls.connect parses
 * them per connection) against one secure context made once. Process CPU per connect, both ends in this
 * process (the server's share is the same in both), 300 connects a round.
 */
async function backendTlsConnect(): Promise<void> {
  console.log("\nA backend connection's TLS (gateway/aggregation/transport.ts backendTls): process CPU per connect, client and server in process");
  const { createServer, connect } = await import('node:tls');
  const { readFile } = await import('node:fs/promises');
  const { ensureDevPki } = await import('../certs/devpki.js');
  const { backendTls } = await import('../gateway/aggregation/transport.js');
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-micro-tls-'));
  try {
    const p = await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    const [ca, cert, key, fpCert, fpKey] = await Promise.all(
      [p.caCert, p.servingCert, p.servingKey, p.frontProxyClientCert, p.frontProxyClientKey].map((f) => readFile(f, 'utf8')),
    );
    const server = createServer({ cert, key, requestCert: true, rejectUnauthorized: false }, (s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const asText = { ca, cert: fpCert, key: fpKey, minVersion: 'TLSv1.2' as const, rejectUnauthorized: true };
    const once = backendTls({ caPem: ca!, clientCert: { certPem: fpCert!, keyPem: fpKey! } });
    const connects = async (opts: object, n: number): Promise<void> => {
      for (let i = 0; i < n; i++)
        await new Promise<void>((res, rej) => {
          const s = connect({ ...opts, host: '127.0.0.1', port }, () => {
            s.destroy();
            res();
          });
          s.on('error', rej);
        });
    };
    for (const [what, opts] of [
      ['PEM text per connection', asText],
      ['one secure context (backendTls)', once],
    ] as const) {
      const per: number[] = [];
      await connects(opts, 50);
      for (let r = 0; r < ROUNDS; r++) {
        const c0 = process.cpuUsage();
        await connects(opts, 300);
        const c = process.cpuUsage(c0);
        per.push((c.user + c.system) / 300);
      }
      row(what, `${median(per).toFixed(0)} µs`);
    }
    server.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const SECTIONS: Record<string, () => void | Promise<void>> = {
  useragent: userAgent,
  sortedkeys: sortedKeys,
  writejson: storedJsonReuse,
  evalsha,
  signature,
  writehead: writeHead,
  audit: auditRequest,
  auditlog: auditLog,
  forwardhead: forwardHead,
  hopbyhop: hopByHop,
  watchencode: watchEncode,
  backendtls: backendTlsConnect,
};

/**
 * The identity part of a proxied request's head (gateway/aggregation/identity.ts `identityHead`): built per request
 * (the pairs, then each client header checked against their names by a scan) against built once per UserInfo (a
 * WeakMap hit, then a Set lookup per client header). kubectl's GET headers; a user with the groups a cluster admin
 * and an OIDC user typically carry.
 */
function forwardHead(): void {
  console.log('\nThe identity part of a forwarded head (gateway/aggregation/identity.ts), per proxied request');
  const user = Object.freeze({
    username: 'oidc:jane@example.com',
    uid: 'c3b1',
    groups: Object.freeze(['oidc:platform', 'oidc:devs', 'system:authenticated']) as string[],
    extra: Object.freeze({ scopes: Object.freeze(['openid', 'groups']) as string[] }),
  });
  const client = ['host', 'user-agent', 'accept', 'accept-encoding', 'kubectl-command', 'kubectl-session', 'audit-id'];
  const perRequest = (): number => {
    const set = identityPairs(user);
    let kept = 0;
    for (const k of client) if (!setsName(set, k)) kept++;
    return kept + set.length;
  };
  const once = (): number => {
    const h = identityHead(user);
    let kept = 0;
    for (const k of client) if (!h.names.has(k)) kept++;
    return kept + h.pairs.length;
  };
  row('built per request (identityPairs, setsName scan)', fmt(nsPerCall(1_000_000, perRequest)));
  row('built once per identity (identityHead, Set lookup)', fmt(nsPerCall(1_000_000, once)));
}

/**
 * The hop-by-hop check of a relayed answer's header names (gateway/aggregation/forwardrules.ts `isHopByHop`), as
 * poolforward.ts's Relay makes them: each name a fresh string from undici's Buffer, lower-cased. A Set lookup (what
 * it was) hashes every fresh name first; the check by length, then content, compares at most two strings. The
 * names of a Gatehouse backend's GET answer over HTTP/1.1.
 */
function hopByHop(): void {
  console.log("\nThe hop-by-hop check of an answer's header names (gateway/aggregation/forwardrules.ts), per proxied answer");
  const SET = new Set([
    'connection',
    'keep-alive',
    'proxy-connection',
    'proxy-authenticate',
    'proxy-authorization',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
  ]);
  const raw = [
    'Audit-Id',
    'Cache-Control',
    'Content-Type',
    'X-Kubernetes-Pf-Flowschema-Uid',
    'X-Kubernetes-Pf-Prioritylevel-Uid',
    'Date',
    'Content-Length',
    'Connection',
    'Keep-Alive',
  ].map((n) => Buffer.from(n, 'latin1'));
  const names = (check: (lower: string) => boolean) => (): number => {
    let kept = 0;
    for (const b of raw) if (!check(b.toString('latin1').toLowerCase())) kept++;
    return kept;
  };
  const none = names(() => false);
  const bySet = names((k) => SET.has(k));
  const byLength = names(isHopByHop);
  const t = { none: [] as number[], set: [] as number[], length: [] as number[] };
  // Alternated, so drift on a shared machine lands on all three.
  for (let r = 0; r < 5; r++) {
    t.none.push(nsPerCall(300_000, none));
    t.set.push(nsPerCall(300_000, bySet));
    t.length.push(nsPerCall(300_000, byLength));
  }
  row('the names made and lower-cased, no check', fmt(median(t.none)));
  row('Set lookup (hashes each fresh name)', fmt(median(t.set)));
  row('by length, then content (isHopByHop)', fmt(median(t.length)));
}

export async function runMicroBench(only: readonly string[] = []): Promise<void> {
  console.log('\nMICRO-BENCHMARKS (bench/micro.ts; median of 5 rounds in one process)');
  for (const [name, run] of Object.entries(SECTIONS)) {
    if (only.length === 0 || only.includes(name)) await run();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runMicroBench(process.argv.slice(2));
