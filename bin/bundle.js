#!/usr/bin/env node
// Bundles the compiled `gatehouse` command (dist/gateway/cli/main.js) and the
// CRD check worker with the packages they import into dist/bundle/, which
// bin/gatehouse.js runs. Loading ~780 ES modules and the CommonJS packages one
// file at a time was most of a start: importing the server's graph took ~600 ms
// of CPU, the bundle's ~200 ms (docs/decisions/2026-12-01-bundled-start.md).
// Split at the dynamic imports, so each command still loads only its own code.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

// Chunk names carry content hashes: a rebuild would otherwise leave the old ones beside the new.
rmSync(new URL('../dist/bundle', import.meta.url), { recursive: true, force: true });

await build({
  absWorkingDir: root,
  entryPoints: {
    main: 'dist/gateway/cli/main.js',
    // crd-offloop.ts starts it by a URL next to its own module: in the bundle, next to the chunk holding it.
    'crd-checkworker': 'dist/lib/registry/builtins/crd-checkworker.js',
  },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Function and class names as written: scope hoisting renames a clash (`Cluster` → `Cluster2`), and packages
  // read `constructor.name` (ioredis tells a Cluster so, errors take their name from it).
  keepNames: true,
  // A native addon cbor-x tries and falls back from: left to its own resolution.
  external: ['cbor-extract'],
  // Bundled CommonJS packages call require() for Node's modules.
  banner: { js: "import { createRequire as __gatehouseRequire } from 'node:module'; const require = __gatehouseRequire(import.meta.url);" },
  logLevel: 'warning',
});
