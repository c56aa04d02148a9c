// What a recorded request leaves behind for every later await of the process
// (gateway/tracing/README.md, "How a request's trace travels"): ns per await
// in a process that never traced, in one whose tracing recorded one request
// (ended), and while a recorded request is in flight. Each phase in a fresh
// child process, since what the first recorded request changes stays for the
// process's life. `node bench/tracehooks.mjs` after `npm run build`; DIST=<a
// build's directory, inside the repo> for an A/B with another build (one whose
// sdk.js imports @opentelemetry/context-async-hooks needs it installed).
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const AWAITS = 2_000_000;
const here = fileURLToPath(new URL('.', import.meta.url));
const dist = resolve(here, '..', process.env.DIST ?? 'dist');
const phase = process.argv[2];

const leaf = async (i) => i + 1;
const four = async (i) => {
  let s = 0;
  for (let k = 0; k < 4; k++) s += await leaf(i + k);
  return s;
};
async function nsPerAwait() {
  const times = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < AWAITS / 4; i++) await four(i);
    times.push(Number(process.hrtime.bigint() - t0) / AWAITS);
  }
  return times.sort((a, b) => a - b)[2];
}

if (phase) {
  if (phase !== 'never') {
    const file = join(mkdtempSync(join(tmpdir(), 'tracehooks-')), 'tracing.yaml');
    // Every request recorded; the spans go nowhere (port 9: refused, logged by nobody).
    writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:9\nsamplingRatePerMillion: 1000000\n');
    const { buildTracing } = await import(pathToFileURL(join(dist, 'gateway/tracing/index.js')).href);
    const span = await import(pathToFileURL(join(dist, 'lib/tracing/span.js')).href);
    const tracing = await buildTracing({ tracingConfigFile: file }, { log: () => undefined, clock: Date.now, batchDelayMs: 10 });
    const req = { headers: {}, method: 'GET', url: '/x', httpVersion: '1.1', socket: {} };
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    // One recorded request with one child span (the API of either build: by hand, or from the context).
    const child = () => (span.inRequestSpan ? span.inRequestSpan(req, 'child', {}, () => leaf(1)) : span.inSpan('child', {}, () => leaf(1)));
    await new Promise((done) =>
      tracing.requests.serve(req, res, async () => {
        await child();
        if (phase === 'inflight') process.stdout.write(String(await nsPerAwait()));
        res.emit('prefinish');
        done();
      }),
    );
    if (phase === 'inflight') process.exit(0);
  }
  process.stdout.write(String(await nsPerAwait()));
  process.exit(0);
} else {
  const ns = {};
  for (const p of ['never', 'ended', 'inflight'])
    ns[p] = Number(execFileSync(process.execPath, [fileURLToPath(import.meta.url), p], { encoding: 'utf8', env: process.env }));
  console.log(`Node ${process.version}, ${dist}: ns per await (median of 5 rounds of ${AWAITS.toLocaleString('en-US')}, each phase in its own process)`);
  console.log(`  tracing never used                    ${ns.never.toFixed(1)} ns`);
  console.log(`  one request recorded, ended           ${ns.ended.toFixed(1)} ns  (${((100 * ns.ended) / ns.never).toFixed(0)}%)`);
  console.log(`  a recorded request in flight          ${ns.inflight.toFixed(1)} ns  (${((100 * ns.inflight) / ns.never).toFixed(0)}%)`);
}
