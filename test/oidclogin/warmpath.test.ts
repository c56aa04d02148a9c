// What keeps `kubectl gatehouse oidc-login get-token` cheap on every kubectl
// call, held in the code's imports: the modules loaded before the cache is
// read (the static imports from the plugin's entry) are this folder's and
// node's built-ins only, no package and not node:crypto; and everything get-token can load stays
// in gateway/cli, the one folder bin/kubectl-gatehouse compares with the
// build for it. setup (which reads a kubeconfig with lib/kubeconfig) is
// another command and checks the whole build.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = join(root, 'gateway/cli/kubectl-gatehouse.ts');

interface Imports {
  static: string[];
  dynamic: string[];
}

function importsOf(file: string): Imports {
  const src = readFileSync(file, 'utf8');
  const stat = [...src.matchAll(/^(?:import|export)\s(?!type\s)[^;]*?\sfrom\s*'([^']+)'/gms), ...src.matchAll(/^import\s+'([^']+)'/gm)].map((m) => m[1]!);
  const dyn = [...src.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!);
  return { static: stat, dynamic: dyn };
}

const resolveTs = (from: string, spec: string): string => join(dirname(from), spec).replace(/\.js$/, '.ts');

/** Every module reachable from `file`, following static imports, and dynamic ones when `dynamic` says so for that file. */
function closure(file: string, dynamic: (file: string, spec: string) => boolean, seen = new Map<string, string[]>()): Map<string, string[]> {
  if (seen.has(file)) return seen;
  const imp = importsOf(file);
  const specs = [...imp.static, ...imp.dynamic.filter((s) => dynamic(file, s))];
  seen.set(file, specs);
  for (const s of specs) if (s.startsWith('.')) closure(resolveTs(file, s), dynamic, seen);
  return seen;
}

test('the modules loaded before the cache is read are gateway/cli’s and node built-ins, no package', () => {
  // The plugin's entry imports oidc-login's entry when the command is oidc-login; nothing else dynamic is taken before the cache read.
  const graph = closure(ENTRY, (f, spec) => f === ENTRY && spec === './oidclogin/index.js');
  const problems: string[] = [];
  for (const [file, specs] of graph) {
    const rel = relative(root, file);
    if (!rel.startsWith('gateway/cli/')) problems.push(`${rel} is outside gateway/cli`);
    for (const s of specs) if (!s.startsWith('.') && !s.startsWith('node:')) problems.push(`${rel} imports the package ${s}`);
    // Loading node:crypto alone costs more than the rest of the warm command.
    if (specs.includes('node:crypto')) problems.push(`${rel} imports node:crypto`);
  }
  assert.deepEqual(problems, []);
  assert.ok(graph.has(join(root, 'gateway/cli/oidclogin/tokencache.ts')), 'the warm path reads the cache');
});

test('everything get-token can load is in gateway/cli (or a package)', () => {
  // The dynamic imports get-token takes: the plugin's oidc-login entry, and the login when the cache has no fresh token.
  const taken = new Set([`${ENTRY} ./oidclogin/index.js`, `${join(root, 'gateway/cli/oidclogin/gettoken.ts')} ./obtain.js`]);
  const graph = closure(ENTRY, (f, s) => taken.has(`${f} ${s}`));
  assert.equal(taken.size, [...graph.values()].flat().filter((s) => s === './oidclogin/index.js' || s === './obtain.js').length);
  const outside = [...graph.keys()].map((f) => relative(root, f)).filter((f) => !f.startsWith('gateway/cli/'));
  assert.deepEqual(outside, []);
  assert.ok(graph.has(join(root, 'gateway/cli/oidclogin/obtain.ts')));
});
