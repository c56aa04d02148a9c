// The floor of the scale section's memory figure: what a bare Node process
// takes to hold N objects' JSON and nothing else, as the store's key → the
// object's UTF-8 bytes in a Map (`bytes`), key → the object's JSON as a V8
// string (`string`: what JSON.stringify returns, one byte a character for
// ASCII; the memory store's one form), or key → the parsed, frozen object
// (`parsed`). Each object is the sample's JSON with its name and uid made
// unique at the same length. Prints one JSON line: RSS and V8's figures
// after a full GC, before (base) and after filling, and the time of a full GC with them held.
//   node --expose-gc bench/scale-floor.mjs <bytes|string|parsed|both> <N> '<sample JSON>'
import { readFileSync } from 'node:fs';

const [form, nArg, sample] = process.argv.slice(2);
const N = Number(nArg);
if (!['bytes', 'string', 'parsed', 'both'].includes(form) || !(N >= 0) || !sample)
  throw new Error('usage: scale-floor.mjs <bytes|string|parsed|both> <N> <sample JSON>');
const gc = globalThis.gc;
if (!gc) throw new Error('run with --expose-gc');

function measure() {
  gc();
  gc();
  const m = process.memoryUsage();
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
  return { rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external };
}

const obj = JSON.parse(sample);
const name = obj.metadata.name;
const uid = obj.metadata.uid ?? '';
// Placeholders the same length as the values they stand for, so every text keeps the sample's length.
const text = sample.replaceAll(JSON.stringify(name), '"\u0001"').replaceAll(JSON.stringify(uid), '"\u0002"');
const pad = (i, len) => String(i).padStart(len, '0').slice(-len);

// Bytes packed end to end in slabs (as lib/api/json.ts keeps a listed object's), each object a view.
let slab = Buffer.allocUnsafeSlow(1 << 20);
let used = 0;
function packed(json) {
  const n = Buffer.byteLength(json);
  if (n > slab.length - used) {
    slab = Buffer.allocUnsafeSlow(Math.max(1 << 20, n));
    used = 0;
  }
  const b = slab.subarray(used, used + n);
  b.write(json);
  used += n;
  return b;
}

const base = measure();
const kept = new Map();
let bytes = 0;
for (let i = 0; i < N; i++) {
  const json = text.replace('"\u0001"', JSON.stringify(pad(i, name.length))).replaceAll('"\u0002"', JSON.stringify(pad(i, uid.length)));
  bytes += Buffer.byteLength(json);
  const key = `/registry/configmaps/${obj.metadata.namespace ?? ''}/${pad(i, name.length)}`;
  const parsed = () => Object.freeze(JSON.parse(json));
  // The string as a store would get it from JSON.stringify: flat, not the replaces' concatenation.
  const string = () => JSON.stringify(JSON.parse(json));
  kept.set(key, form === 'bytes' ? packed(json) : form === 'string' ? string() : form === 'parsed' ? parsed() : [parsed(), packed(json)]);
}
const full = measure();
// A full collection's time with these objects held (median of 5): the marking a major GC does for them.
const times = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  gc();
  times.push(performance.now() - t0);
}
const gcMs = times.sort((a, b) => a - b)[2];
process.stdout.write(JSON.stringify({ form, n: N, jsonBytes: bytes, base, full, gcMs, held: kept.size }) + '\n');
