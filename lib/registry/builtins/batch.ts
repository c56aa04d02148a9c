// batch/v1: Jobs and CronJobs, stored and served as kube-apiserver 1.33 does
// (pkg/registry/batch/*/strategy.go, pkg/apis/batch/v1/defaults.go). No job
// controller or cron scheduler runs: nothing starts pods or creates Jobs.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { labelSelectorFromObject, matchesLabels } from '../../api/selectors.js';
import type { ResourceType } from '../types.js';
import { builtinType, statusOf } from './group-type.js';
import { at, bool, record, sameJson, str } from '../fields.js';
import { CRONJOB_COLUMNS, JOB_COLUMNS } from './batch-printers.js';
import { validatePodSpec } from './core-validation.js';
import { defaultPodTemplate } from './pod-defaults.js';
import { goLabelSelector, goStringMap, immutableSelector, nonNegative } from './workload-validation.js';

type Obj = Record<string, unknown>;

function batch(kind: string, plural: string, rest: Partial<ResourceType>): ResourceType {
  return builtinType('batch', kind, plural, { namespaced: true, categories: ['all'], subresources: [statusOf(kind)], generation: 'spec', ...rest });
}

function fill(o: Obj, field: string, value: unknown): void {
  if (o[field] === undefined || o[field] === null || o[field] === '') o[field] = value;
}

function child(o: Obj, field: string): Obj {
  if (!isPlainObject(o[field])) o[field] = {};
  return o[field] as Obj;
}

/** The labels kube's job strategy puts on the template and selects on (batch.kubernetes.io/…, and the legacy names). */
const JOB_NAME_LABELS = ['job-name', 'batch.kubernetes.io/job-name'];
const CONTROLLER_UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];

/** generateSelector: unless spec.manualSelector, the template is labelled with the job's name and uid and selected by the uid. */
function generateSelector(obj: KObject): void {
  const spec = child(obj as Obj, 'spec');
  if (spec['manualSelector'] === true) return;
  const template = child(spec, 'template');
  const labels = child(child(template, 'metadata'), 'labels');
  // SetDefaults_Job gives a Job without labels its template's label map itself (a Go map is shared), and runs
  // again on every decode from storage: the labels generated here show on such a Job too.
  const own = obj.metadata.labels;
  const shared = own === undefined || Object.keys(own).length === 0 || sameJson(own, labels);
  for (const l of JOB_NAME_LABELS) if (!Object.hasOwn(labels, l)) labels[l] = obj.metadata.name ?? '';
  for (const l of CONTROLLER_UID_LABELS) if (!Object.hasOwn(labels, l)) labels[l] = obj.metadata.uid ?? '';
  if (shared) obj.metadata.labels = { ...(labels as Record<string, string>) };
  const matchLabels = child(child(spec, 'selector'), 'matchLabels');
  if (!Object.hasOwn(matchLabels, CONTROLLER_UID_LABELS[1]!)) matchLabels[CONTROLLER_UID_LABELS[1]!] = obj.metadata.uid ?? '';
}

/** SetDefaults_Job. */
function defaultJobSpec(spec: Obj, obj?: KObject): void {
  if (spec['completions'] === undefined && spec['parallelism'] === undefined) spec['completions'] = 1;
  fill(spec, 'parallelism', 1);
  fill(spec, 'backoffLimit', spec['backoffLimitPerIndex'] !== undefined ? 2147483647 : 6);
  fill(spec, 'completionMode', 'NonIndexed');
  fill(spec, 'suspend', false);
  fill(spec, 'podReplacementPolicy', spec['podFailurePolicy'] !== undefined ? 'Failed' : 'TerminatingOrFailed');
  const labels = at(spec, 'template', 'metadata', 'labels');
  if (obj && isPlainObject(labels) && Object.keys(obj.metadata.labels ?? {}).length === 0) obj.metadata.labels = { ...(labels as Record<string, string>) };
  defaultPodTemplate(spec);
}

const RESTART_POLICIES = ['OnFailure', 'Never'];

/** validateJobSpec as people meet it: counts, a selector matching the template, a template whose pods do not restart Always. */
function jobSpecCauses(spec: unknown, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const f of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished']) {
    causes.push(...nonNegative(spec, `${path}.${f}`, f));
  }
  const template = at(spec, 'template');
  if (!isPlainObject(template)) return [...causes, cause.required(`${path}.template`)];
  const rawSelector = at(spec, 'selector');
  if (isPlainObject(rawSelector)) {
    try {
      const selector = labelSelectorFromObject(rawSelector);
      const labels = record(template, 'metadata', 'labels') as Record<string, string>;
      if (selector.requirements.length > 0 && !matchesLabels(selector, labels)) {
        causes.push({
          reason: 'FieldValueInvalid',
          field: `${path}.template.metadata.labels`,
          message: `Invalid value: ${goStringMap(at(template, 'metadata', 'labels'))}: \`selector\` does not match template \`labels\``,
        });
      }
    } catch (err) {
      causes.push({
        reason: 'FieldValueInvalid',
        field: `${path}.selector`,
        message: `Invalid value: ${goLabelSelector(rawSelector)}: ${(err as Error).message}`,
      });
    }
  }
  causes.push(...validatePodSpec(template['spec'], `${path}.template.spec`));
  const restart = str(template, 'spec', 'restartPolicy');
  if (!RESTART_POLICIES.includes(restart)) causes.push(cause.notSupported(`${path}.template.spec.restartPolicy`, restart, RESTART_POLICIES));
  return causes;
}

/** ValidateJobSpecUpdate: the selector, the completion mode and the template (of a job that is not suspended) never change. */
function jobUpdateCauses(obj: KObject, old: KObject | undefined): StatusCause[] {
  if (!old) return [];
  const causes = immutableSelector(obj, old);
  for (const f of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex']) {
    if (!sameJson(at(obj, 'spec', f), at(old, 'spec', f))) causes.push(cause.invalid(`spec.${f}`, at(obj, 'spec', f) ?? null, 'field is immutable'));
  }
  // kube lets a suspended job that never started change its template's scheduling directives; any other change is refused.
  if (!bool(old, 'spec', 'suspend') && !sameJson(at(obj, 'spec', 'template'), at(old, 'spec', 'template'))) {
    causes.push(cause.invalid('spec.template', at(obj, 'spec', 'template'), 'field is immutable'));
  }
  return causes;
}

export const jobs = batch('Job', 'jobs', {
  columns: JOB_COLUMNS,
  prepareForCreate(obj) {
    generateSelector(obj);
  },
  defaults(obj) {
    defaultJobSpec(child(obj as Obj, 'spec'), obj);
  },
  validate: (obj, old) => [...jobSpecCauses(obj['spec'], 'spec'), ...jobUpdateCauses(obj, old)],
});

/** robfig/cron's standard parser as kube uses it: five fields, or a descriptor such as `@hourly`. */
function scheduleCause(schedule: string): StatusCause[] {
  if (schedule === '') return [cause.required('spec.schedule')];
  const s = schedule.replace(/^(TZ|CRON_TZ)=\S+\s+/, '');
  if (s.startsWith('@')) {
    const ok = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'].includes(s) || /^@every\s+\S+$/.test(s);
    return ok ? [] : [cause.invalid('spec.schedule', schedule, `unrecognized descriptor: ${s}`)];
  }
  const fields = s.trim().split(/\s+/);
  return fields.length === 5 ? [] : [cause.invalid('spec.schedule', schedule, `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`)];
}

const CRONJOB_NAME_MAX = 63 - 11;

export const cronjobs = batch('CronJob', 'cronjobs', {
  shortNames: ['cj'],
  columns: CRONJOB_COLUMNS,
  // SetDefaults_CronJob; the job template's pod spec gets the pod defaults, the job spec none.
  defaults(obj) {
    const spec = child(obj as Obj, 'spec');
    fill(spec, 'concurrencyPolicy', 'Allow');
    fill(spec, 'suspend', false);
    fill(spec, 'successfulJobsHistoryLimit', 3);
    fill(spec, 'failedJobsHistoryLimit', 1);
    const jobSpec = at(spec, 'jobTemplate', 'spec');
    if (isPlainObject(jobSpec)) defaultPodTemplate(jobSpec);
  },
  validate(obj, old) {
    const causes = [...scheduleCause(str(obj, 'spec', 'schedule'))];
    const policy = str(obj, 'spec', 'concurrencyPolicy');
    if (!['Allow', 'Forbid', 'Replace'].includes(policy)) causes.push(cause.notSupported('spec.concurrencyPolicy', policy, ['Allow', 'Forbid', 'Replace']));
    for (const f of ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit'])
      causes.push(...nonNegative(obj, `spec.${f}`, 'spec', f));
    causes.push(...jobSpecCauses(at(obj, 'spec', 'jobTemplate', 'spec'), 'spec.jobTemplate.spec'));
    // kube's ValidateCronJobCreate: the controller names its Jobs `<name>-<11 characters>`, and a Job name is at most 63.
    const name = obj.metadata.name ?? '';
    if (old === undefined && name.length > CRONJOB_NAME_MAX)
      causes.push(cause.invalid('metadata.name', name, `must be no more than ${CRONJOB_NAME_MAX} characters`));
    return causes;
  },
});

export const BATCH_TYPES: readonly ResourceType[] = [jobs, cronjobs];
