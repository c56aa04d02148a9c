// The check worker's side: runs the costly schema checks of one CRD write
// (crd-schemacheck.ts) on a worker thread, after the same defaulting the
// write applies, and posts the causes with the key the write's synchronous
// validation looks them up by; or a stored CRD's structural violations. Before each pattern or rule it compiles it
// posts the field, so a check stopped at its time budget can name it.
import { parentPort } from 'node:worker_threads';
import type { KObject } from '../../api/meta.js';
import { onCostlyStep } from '../../crdschema/index.js';
import { pruneCrdSchemas } from './crd-schemaprune.js';
import { nonStructuralCauses, schemaCheckKey, versionSchemaCauses } from './crd-schemacheck.js';
import { defaultCrd } from './crd-validation.js';

/**
 * One job: 'write' = the schema checks of a CRD write (the object as the write will validate it
 * once defaulted, and the stored one on update); 'structural' = a stored CRD's structural violations
 * (the NonStructuralSchema condition, which compiles its patterns too).
 */
export type CheckJob =
  { readonly task: 'write'; readonly crd: KObject; readonly old: KObject | undefined } | { readonly task: 'structural'; readonly crd: KObject };

/** What the worker posts: the field of each costly step, then the answer (or the error that stopped it). */
export type CheckMessage = { step: string } | { key: string; causes: unknown[][] } | { violations: unknown[] } | { error: string };

const port = parentPort;
if (port) {
  onCostlyStep((field) => port.postMessage({ step: field } satisfies CheckMessage));
  port.on('message', (job: CheckJob) => {
    try {
      port.postMessage({ step: 'spec.versions' } satisfies CheckMessage);
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
