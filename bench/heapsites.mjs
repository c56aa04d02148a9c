// Sums a sampling heap profile (HEAPPROF= of cg-sidecar.mjs, or `node
// --heap-prof`) by allocating function (self) and by the innermost frame of
// this project's code on the stack (the Gatehouse function that asked for
// it, Node's own allocations under it included): bytes per operation.
//   node bench/heapsites.mjs <file.heapprofile> [N operations] [TOP (25)]
import { readFileSync } from 'node:fs';

const [file, nArg, topArg] = process.argv.slice(2);
const N = Number(nArg ?? 1);
const TOP = Number(topArg ?? 25);
const { head } = JSON.parse(readFileSync(file, 'utf8'));
const self = new Map();
const ours = new Map();
let total = 0;
const label = (f) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
const isOurs = (url) => url.includes('/dist/') && !url.includes('node_modules');
function walk(node, stack) {
  const here = [...stack, node.callFrame];
  const bytes = node.selfSize;
  if (bytes > 0) {
    total += bytes;
    const k = label(node.callFrame);
    self.set(k, (self.get(k) ?? 0) + bytes);
    const inner = [...here].reverse().find((f) => isOurs(f.url));
    const o = inner ? label(inner) : '(no Gatehouse frame: Node, TLS)';
    ours.set(o, (ours.get(o) ?? 0) + bytes);
  }
  for (const c of node.children) walk(c, here);
}
walk(head, []);
const print = (title, m) => {
  console.log(title);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP))
    console.log(`  ${(v / N).toFixed(0).padStart(7)} B  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`${file}: ${(total / N).toFixed(0)} bytes sampled per operation over ${N}`);
print('by allocating function (self):', self);
print('by innermost Gatehouse frame:', ours);
