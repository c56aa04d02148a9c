#!/usr/bin/env node
// Whether dist/ (made by `npm run build`) is newer than every source file.
// `npm run build` skips tsc when it is (exit 0 here), so `npm start` on a
// built tree never rewrites files that a running Gatehouse is importing — the
// tests start one while another runs `npm start`, and a half-written module
// failed its import once. bin/gatehouse.js picks dist/ or the sources with it.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', 'BUILT');
const SOURCES = ['gateway', 'lib', 'backends', 'certs', 'policies'];

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * `dirs` narrows the comparison to the folders whose modules a caller will load (the
 * kubectl plugin's get-token, run on every kubectl call, loads only gateway/cli's):
 * walking every source costs more than the rest of that command.
 */
export function buildIsFresh(dirs = SOURCES) {
  // The stamp is written after the bundle (bin/bundle.js); a dist/ from before the bundle existed is stale.
  if (!existsSync(stamp) || !existsSync(join(root, 'dist', 'bundle', 'main.js'))) return false;
  const built = statSync(stamp).mtimeMs;
  return dirs.every((d) => !existsSync(join(root, d)) || newestSource(join(root, d)) <= built);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exit(buildIsFresh() ? 0 : 1);
