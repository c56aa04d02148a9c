// Reads of a custom resource through a webhook-converted version (owned with
// backends/core/conversion.ts): one in-process server with the Gadgets CRD of
// the tests (v2 stored, v1 converted by an HTTPS webhook in this process). GET
// of objects never read through v1 (each a first read: one ConversionReview),
// GET of one object through v1 again and again (its converted state is kept),
// and GET of the same object through the storage version v2 (no conversion).
// Mirrored order (v2, v1 repeated, v1 repeated, v2), pooled. Target: repeated
// v1 reads ≥ 80% of v2 reads.
// `BENCH_ONLY=crdconversion npm run bench`; `node --import tsx bench/crdconversion.ts` alone.
import { pathToFileURL } from 'node:url';
import { startTestServer, type TestServer } from '../test/helpers/server.js';
import { installGadgets, startConversionWebhook } from '../test/crd/convertwebhook.js';

const SERVE_MS = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const FIRST_READS = Number(process.env['BENCH_CONVERSION_OBJECTS'] ?? 2000);
const LOOPS = 8;
const base = (v: string) => `/apis/conv.example.com/${v}/namespaces/default/gadgets`;

export interface ConversionReadFigures {
  /** GETs per second through v1 of objects not read through v1 before (each converted by the webhook). */
  firstPerS: number;
  /** GETs per second through v1 of one object already read through v1. */
  repeatedPerS: number;
  /** GETs per second through the storage version v2 of the same object. */
  storagePerS: number;
  /** ConversionReviews the webhook received during the repeated reads (0: each state converted once). */
  repeatedReviews: number;
}

/** GET loops over `paths` (each loop takes the next path) for `ms`, or until every path was read once when `once`. */
async function rate(s: TestServer, paths: readonly string[], ms: number, once = false): Promise<{ n: number; s: number }> {
  let n = 0;
  let next = 0;
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (once ? next < paths.length : performance.now() < end) {
        const path = paths[next++ % paths.length]!;
        const r = await s.admin.request('GET', path);
        if (r.status !== 200) throw new Error(`bench: GET ${path}: ${r.status} ${r.text.slice(0, 200)}`);
        n++;
      }
    }),
  );
  return { n, s: (performance.now() - start) / 1000 };
}

export async function runConversionBench(): Promise<ConversionReadFigures> {
  const hook = await startConversionWebhook();
  const s = await startTestServer();
  try {
    await installGadgets(s, hook);
    for (let i = 0; i < FIRST_READS; i += 50) {
      const batch = Array.from({ length: Math.min(50, FIRST_READS - i) }, (_, k) =>
        s.admin.request('POST', base('v2'), {
          apiVersion: 'conv.example.com/v2',
          kind: 'Gadget',
          metadata: { name: `g${i + k}` },
          spec: { host: `h${i + k}.example`, port: 443 },
        }),
      );
      for (const r of await Promise.all(batch)) if (r.status !== 201) throw new Error(`bench: create: ${r.status} ${r.text.slice(0, 200)}`);
    }
    const warm = [`${base('v2')}/g0`, `${base('v1')}/g0`];
    await rate(s, warm, 1000);
    const names = Array.from({ length: FIRST_READS - 1 }, (_, i) => `${base('v1')}/g${i + 1}`);
    const first = await rate(s, names, 0, true);
    hook.reviews.length = 0;
    const storage = { n: 0, s: 0 };
    const repeated = { n: 0, s: 0 };
    for (const [into, path] of [
      [storage, `${base('v2')}/g0`],
      [repeated, `${base('v1')}/g0`],
      [repeated, `${base('v1')}/g0`],
      [storage, `${base('v2')}/g0`],
    ] as const) {
      const r = await rate(s, [path], SERVE_MS / 2);
      into.n += r.n;
      into.s += r.s;
    }
    return {
      firstPerS: first.n / first.s,
      repeatedPerS: repeated.n / repeated.s,
      storagePerS: storage.n / storage.s,
      repeatedReviews: hook.reviews.length,
    };
  } finally {
    await s.close();
    await hook.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await runConversionBench(), null, 2));
}
