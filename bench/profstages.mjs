// Splits a V8 CPU profile (a .cpuprofile: `PROF=` of cg-creates.mjs, `node
// --cpu-prof`, BENCH_CPU_PROF) into the stages of a request, by the file of
// the innermost Gatehouse frame on each sample's stack: JSON.parse called by
// the body decoder counts as decode, a Map lookup in the store as storage.
// Samples with no Gatehouse frame on their stack are Node's own HTTP/TLS work
// (or GC, idle, the profiler). Prints µs per operation with N (operations in
// the profile) and the share of the whole:
//   node bench/profstages.mjs <file.cpuprofile> [N]
// TOP=<n> also lists the n heaviest functions (self time); STAGE=<name> only
// those whose samples the stage holds.
import { readFileSync } from 'node:fs';

/** First match wins: a path fragment of dist/ (or the sources) and its stage. */
const STAGES = [
  ['lib/http/body', 'read body'],
  ['lib/validation/decode', 'decode'],
  ['lib/validation/json', 'decode'],
  ['lib/validation/yaml', 'decode'],
  ['lib/validation/', 'schema check (fieldValidation)'],
  ['lib/validation/fields', 'schema check (fieldValidation)'],
  ['lib/schema/', 'schema check (fieldValidation)'],
  ['lib/fieldmanager/', 'managed fields'],
  ['handlers/managedfields', 'managed fields'],
  ['lib/patch/', 'patch (merge, apply)'],
  ['handlers/patch', 'patch (merge, apply)'],
  ['handlers/apply', 'patch (merge, apply)'],
  ['backends/core/admission/', 'admission'],
  ['backends/core/objects', 'prepare (server fields, defaulting, validation)'],
  ['lib/registry/', 'prepare (server fields, defaulting, validation)'],
  ['backends/core/store/', 'storage'],
  ['backends/core/watchevents', 'storage'],
  ['backends/core/render', 'encoding'],
  ['lib/http/respond', 'encoding'],
  ['lib/api/json', 'encoding'],
  ['lib/protobuf/', 'encoding'],
  ['lib/cbor/', 'encoding'],
  ['gateway/audit/', 'audit'],
  ['gateway/metrics/', 'metrics'],
  ['lib/metrics/', 'metrics'],
  ['backends/core/metrics', 'metrics'],
  ['gateway/authn/', 'authentication'],
  ['gateway/authz/', 'authorization'],
  ['lib/rbac/', 'authorization'],
  ['gateway/flowcontrol/', 'priority and fairness'],
  ['gateway/tracing/', 'tracing'],
  ['lib/tracing/', 'tracing'],
  ['backends/core/', 'core backend (handlers, routing)'],
  ['gateway/', 'gateway pipeline'],
  ['lib/', 'gateway pipeline'],
];
const [file, nArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profstages.mjs <file.cpuprofile> [N]');
const n = Number(nArg ?? 1);
const top = Number(process.env.TOP ?? 0);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
/** Helpers every stage calls: their time is their caller's. */
const SHARED = ['lib/api/own', 'lib/api/meta'];
/** A Gatehouse module (compiled or the sources), not a dependency's or Node's. */
const ours = (url) =>
  url.startsWith('file://') && !url.includes('/node_modules/') && /\/(lib|gateway|backends)\//.test(url) && !SHARED.some((s) => url.includes(s));
/** Node's native writes to the socket, TLS encryption included: whoever called them. */
const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString']);
/** The stage of a node: its innermost Gatehouse frame's file, or what Node was doing. */
const stageCache = new Map();
function stageOf(id) {
  if (stageCache.has(id)) return stageCache.get(id);
  const node = byId.get(id);
  const { url, functionName } = node.callFrame;
  let stage;
  if (url === '' && SOCKET_WRITES.has(functionName)) stage = 'socket write (TLS, kernel)';
  else if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') stage = functionName;
  else if (ours(url)) stage = STAGES.find(([frag]) => url.includes(frag))?.[1] ?? 'other Gatehouse';
  else if (parent.has(id)) stage = stageOf(parent.get(id));
  else stage = 'Node (HTTP, TLS, timers)';
  if (stage === '(root)') stage = 'Node (HTTP, TLS, timers)';
  stageCache.set(id, stage);
  return stage;
}
// Time per sample: the deltas (µs) V8 records beside each sample.
const self = new Map();
const fnSelf = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  const dt = profile.timeDeltas[i + 1] ?? 0;
  const node = byId.get(id);
  let stage = stageOf(id);
  if (node.callFrame.functionName === '(root)') stage = 'Node (HTTP, TLS, timers)';
  self.set(stage, (self.get(stage) ?? 0) + dt);
  if (process.env.STAGE && stage !== process.env.STAGE) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const fn = `${functionName || '(anonymous)'} ${url.replace(/^.*?\/(?=(lib|gateway|backends|node_modules)\/)/, '')}:${lineNumber + 1}`;
  fnSelf.set(fn, (fnSelf.get(fn) ?? 0) + dt);
}
const busy = [...self].filter(([s]) => s !== '(idle)').reduce((a, [, v]) => a + v, 0);
console.log(`${file}: ${(busy / 1000).toFixed(0)} ms busy over ${n} operations = ${(busy / n).toFixed(1)} µs per operation (idle left out)`);
for (const [stage, us] of [...self].filter(([s]) => s !== '(idle)').sort((a, b) => b[1] - a[1])) {
  console.log(`  ${stage.padEnd(50)} ${(us / n).toFixed(1).padStart(8)} µs  ${((100 * us) / busy).toFixed(1).padStart(5)} %`);
}
if (top > 0) {
  console.log(`heaviest functions (self):`);
  for (const [fn, us] of [...fnSelf].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${(us / n).toFixed(2).padStart(8)} µs  ${fn}`);
}
