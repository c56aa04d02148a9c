#!/usr/bin/env node
// Runs the compiled build (dist/bundle/, made by `npm run build`: tsc, then
// bin/bundle.js) when it is newer than every source file, else the TypeScript
// sources through tsx. Compiled
// code serves ~15-20% more requests per core than code run through tsx, and a
// stale build must never run in place of edited sources.
import { buildIsFresh } from './fresh.js';

if (buildIsFresh()) {
  await import('../dist/bundle/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../gateway/cli/main.ts');
}
