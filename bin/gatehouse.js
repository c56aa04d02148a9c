#!/usr/bin/env node
// Runs the compiled build (dist/, made by `npm run build`) when it is newer
// than every source file, else the TypeScript sources through tsx. Compiled
// code serves ~15-20% more requests per core than code run through tsx, and a
// stale build must never run in place of edited sources.
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

function buildIsFresh() {
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return SOURCES.every((d) => !existsSync(join(root, d)) || newestSource(join(root, d)) <= built);
}

if (buildIsFresh()) {
  await import('../dist/gateway/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../gateway/cli/main.ts');
}
