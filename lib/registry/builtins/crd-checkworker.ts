// The check worker's side: runs the costly schema checks of one CRD write
// (crd-schemacheck.ts) on a worker thread, after the same defaulting the
// write applies, and posts the causes with the key the write's synchronous
// validation looks them up by; or a stored CRD's structural violations; or
// a custom resource write's values tested against patterns too costly to
// compile on the event loop (compiled here once per source and kept). Before each pattern or rule it compiles it
// posts the field, so a check stopped at its time budget can name it.
import { parentPort } from 'node:worker_threads';
import type { KObject } from '../../api/meta.js';
import type { RE2JS } from '@bufbuild/re2';
import { compileRe2, onCostlyStep } from '../../crdschema/index.js';
import { pruneCrdSchemas } from './crd-schemaprune.js';
import { nonStructuralCauses, schemaCheckKey, versionSchemaCauses } from './crd-schemacheck.js';
import { defaultCrd } from './crd-validation.js';

/**
 * One job: 'write' = the schema checks of a CRD write (the object as the write will validate it
 * once defaulted, and the stored one on update); 'structural' = a stored CRD's structural violations
 * (the NonStructuralSchema condition, which compiles its patterns too).
 */
export type CheckJob =
  | { readonly task: 'write'; readonly crd: KObject; readonly old: KObject | undefined }
  | { readonly task: 'structural'; readonly crd: KObject }
  | { readonly task: 'patterns'; readonly tests: ReadonlyArray<readonly [source: string, value: string]> };

/** What the worker posts: the field of each costly step, then the answer (or the error that stopped it). */
export type CheckMessage =
  { step: string } | { key: string; causes: unknown[][] } | { violations: unknown[] } | { verdicts: boolean[]; cheap: string[] } | { error: string };

/** A pattern that compiled here in less is compiled in place on the event loop from then on. */
const CHEAP_MS = 5;
/** Compiled patterns kept by source (the costly ones are the point; a large one holds megabytes). */
const KEPT_PATTERNS = 16;
const compiled = new Map<string, RE2JS | null>();

/** The 'patterns' job: each value tested against its pattern, compiled once per source; which compiled cheaply. */
function testPatterns(tests: ReadonlyArray<readonly [string, string]>): CheckMessage {
  const cheap: string[] = [];
  const verdicts = tests.map(([source, value]) => {
    let re = compiled.get(source);
    if (re === undefined) {
      const t = performance.now();
      re = compileRe2(source);
      if (performance.now() - t < CHEAP_MS) cheap.push(source);
      if (compiled.size >= KEPT_PATTERNS) compiled.delete(compiled.keys().next().value!);
      compiled.set(source, re);
    }
    return re === null || re.test(value);
  });
  return { verdicts, cheap };
}

const port = parentPort;
if (port) {
  onCostlyStep((field) => port.postMessage({ step: field } satisfies CheckMessage));
  // The first compile in a fresh thread runs cold (ten times slower): warm up, so a cheap pattern is measured cheap.
  compileRe2('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$');
  port.on('message', (job: CheckJob) => {
    try {
      port.postMessage({ step: 'spec.versions' } satisfies CheckMessage);
      if (job.task === 'patterns') {
        port.postMessage(testPatterns(job.tests));
        return;
      }
      if (job.task === 'structural') {
        port.postMessage({ violations: nonStructuralCauses(job.crd) } satisfies CheckMessage);
        return;
      }
      const { crd, old } = job;
      pruneCrdSchemas(crd);
      defaultCrd(crd);
      const key = schemaCheckKey(crd, old);
      port.postMessage({ key, causes: versionSchemaCauses(crd, old) } satisfies CheckMessage);
    } catch (err) {
      port.postMessage({ error: err instanceof Error ? err.message : String(err) } satisfies CheckMessage);
    }
  });
}
