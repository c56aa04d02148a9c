// CRD writes check their schemas on a worker thread: compiling a client's
// regular expressions and CEL rules took seconds of event loop for one CRD (a
// 100 KB pattern, a thousand rules), during which no other client was served.
// One worker, started on the first CRD write and kept; checks run one at a
// time, each within a time budget: a check that overruns it is stopped (the
// worker is replaced) and the CRD refused naming the field being compiled,
// never stored half-checked. The causes found are kept for the write's
// synchronous validation (crd-schemacheck.ts), which then does no schema work.
// The same worker tests custom resources' values against patterns too costly
// to compile on the event loop (lib/crdschema/offloop-patterns.ts).
import { Worker } from 'node:worker_threads';
import type { KObject } from '../../api/meta.js';
import type { PatternTest } from '../../crdschema/index.js';
import { cause, internalError, invalid, type StatusCause } from '../../api/status.js';
import { sameJson } from '../fields.js';
import type { CheckJob, CheckMessage } from './crd-checkworker.js';
import { costlyToCheck, nonStructuralCauses, rememberSchemaCauses } from './crd-schemacheck.js';

/** How long one CRD's schema checks may take (kube has no such bound: its compilers take milliseconds where RE2JS can take minutes). */
export const crdCheckBudget = { ms: 20_000 };

/** The worker's module beside this one: .ts when run from the sources (tests, through tsx, which the worker then loads too), .js when built. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCES ? './crd-checkworker.ts' : './crd-checkworker.js', import.meta.url);

let worker: Worker | undefined;
/** The checks in line: each starts when the one before has settled. */
let line: Promise<unknown> = Promise.resolve();
/** What the worker is checking: a job's task and what it names (a CRD, or a custom resource type's plural.group). */
export interface RunningCheck {
  readonly task: CheckJob['task'];
  readonly name: string;
}
let running: RunningCheck | undefined;

/**
 * The check the worker is running (it has reported its first step and not yet answered or been
 * stopped; a new object for each check), or undefined when none runs there. Read by tests: a round
 * trip of another client begun and answered within one check shows the event loop served it meanwhile.
 */
export function checkRunningOffLoop(): RunningCheck | undefined {
  return running;
}

function theWorker(): Worker {
  if (worker === undefined) {
    worker = FROM_SOURCES
      ? new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); })`,
          { eval: true },
        )
      : new Worker(WORKER_URL);
    // An idle worker keeps no process alive; a write awaiting it has its request open anyway.
    worker.unref();
  }
  return worker;
}

/** Stops the worker (it overran its budget or failed); the next check starts another. */
function replaceWorker(w: Worker): void {
  if (worker === w) worker = undefined;
  w.removeAllListeners();
  void w.terminate();
}

/** What a job answers: the structural violations, or the pattern verdicts (a write's check answers through rememberSchemaCauses). */
type Answer = Extract<CheckMessage, { violations: unknown } | { verdicts: unknown }> | undefined;

function runCheck(job: CheckJob, name: string): Promise<Answer> {
  const w = theWorker();
  return new Promise<Answer>((resolve, reject) => {
    let field = 'spec.versions';
    const done = (err: Error | undefined, answer?: Answer) => {
      clearTimeout(timer);
      running = undefined;
      w.off('message', onMessage);
      w.off('error', onError);
      w.off('exit', onExit);
      if (err) reject(err);
      else resolve(answer);
    };
    const overrun = () => {
      replaceWorker(w);
      if (job.task === 'patterns') {
        done(internalError(`testing values against the patterns of ${name} exceeds the time budget of ${crdCheckBudget.ms / 1000}s`));
        return;
      }
      const refused: StatusCause = cause.forbidden(field, `compilation exceeds the time budget of ${crdCheckBudget.ms / 1000}s`);
      done(invalid({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' }, name, [refused]));
    };
    let timer = setTimeout(overrun, crdCheckBudget.ms);
    let started = false;
    const onMessage = (m: CheckMessage) => {
      if ('step' in m) {
        field = m.step;
        // The budget counts from the job's start in the worker, not from loading a new worker's modules.
        if (!started) {
          started = true;
          running = { task: job.task, name };
          clearTimeout(timer);
          timer = setTimeout(overrun, crdCheckBudget.ms);
        }
      } else if ('key' in m) {
        rememberSchemaCauses(m.key, m.causes as StatusCause[][]);
        done(undefined);
      } else if ('violations' in m || 'verdicts' in m) done(undefined, m);
      else {
        replaceWorker(w);
        done(internalError(`checking the schemas of CustomResourceDefinition "${name}" failed: ${m.error}`));
      }
    };
    const onError = (err: Error) => {
      replaceWorker(w);
      done(internalError(`checking the schemas of CustomResourceDefinition "${name}" failed: ${err.message}`));
    };
    const onExit = () => {
      replaceWorker(w);
      done(internalError(`checking the schemas of CustomResourceDefinition "${name}" failed: the check worker stopped`));
    };
    w.on('message', onMessage);
    w.once('error', onError);
    w.once('exit', onExit);
    w.postMessage(job);
  });
}

/**
 * Checks the schemas of a CRD write off the event loop (the type's `prevalidate`):
 * the write's `validate` that follows finds the causes. A write that leaves the
 * spec as stored checks no schema, and a CRD of a few small patterns and rules is
 * checked by `validate` itself. Throws 422 when the budget runs out.
 */
export async function precheckCrd(crd: KObject, old: KObject | undefined): Promise<void> {
  if (old !== undefined && sameJson(crd['spec'], old['spec'])) return;
  if (!costlyToCheck(crd) && !costlyToCheck(old)) return;
  await inLine({ task: 'write', crd, old }, crd.metadata.name ?? crd.metadata.generateName ?? '');
}

/**
 * A stored CRD's structural violations (nonStructuralCauses), found off the event loop: its patterns
 * compile there too. Rejects when the budget runs out (the caller decides what that means).
 */
export async function nonStructuralCausesOffLoop(crd: KObject): Promise<StatusCause[]> {
  if (!costlyToCheck(crd)) return nonStructuralCauses(crd);
  const answer = await inLine({ task: 'structural', crd }, crd.metadata.name ?? '');
  return answer && 'violations' in answer ? (answer.violations as StatusCause[]) : [];
}

/**
 * Answers a custom resource write's tests of patterns that may compile slowly (the type's
 * `prevalidate`; `kind` names the type in an error): the worker compiles each once and keeps
 * it, and says which compiled cheaply (those compile in place from then on).
 */
export async function testPatternsOffLoop(tests: readonly PatternTest[], kind: string): Promise<void> {
  const answer = await inLine({ task: 'patterns', tests: tests.map((t) => [t.pattern.source, t.value] as const) }, kind);
  if (!answer || !('verdicts' in answer)) return;
  const cheap = new Set(answer.cheap);
  tests.forEach((t, i) => t.pattern.answer(t.value, answer.verdicts[i] === true, cheap.has(t.pattern.source)));
}

function inLine(job: CheckJob, name: string): Promise<Answer> {
  const run = line.then(() => runCheck(job, name));
  line = run.catch(() => {});
  return run;
}
