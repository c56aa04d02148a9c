// Tables of batch/v1 Jobs and CronJobs, after kube's printers
// (pkg/printers/internalversion/printers.go): same columns, same cells.
import type { KObject } from '../../api/meta.js';
import { batchV1 } from '../../schema/gen/batch-v1.js';
import type { Column } from '../types.js';
import { ageColumn, column, humanDuration, nameColumn, since } from '../columns.js';
import { containerColumns } from './apps-printers.js';
import { at, list, num, str, time } from '../fields.js';
import { formatLabelSelector } from './selector-text.js';

const doc = (type: string, field: string): string => batchV1.types[type]?.f[field]?.[1] ?? '';

/** The template's container names and images, and the selector, shown with -o wide. */
function wideColumns(...template: string[]): Column[] {
  const selectorAt = template.slice(0, -1);
  return [
    ...containerColumns(...template),
    column('Selector', doc('JobSpec', 'selector'), (o) => formatLabelSelector(at(o, ...selectorAt, 'selector')), { priority: 1 }),
  ];
}

const hasCondition = (o: KObject, type: string) => list(o, 'status', 'conditions').some((c) => str(c, 'type') === type && str(c, 'status') === 'True');

/** printJob's Status cell, in kube's order of precedence. */
function jobStatus(o: KObject): string {
  if (hasCondition(o, 'Complete')) return 'Complete';
  if (hasCondition(o, 'Failed')) return 'Failed';
  if (o.metadata.deletionTimestamp) return 'Terminating';
  if (hasCondition(o, 'Suspended')) return 'Suspended';
  if (hasCondition(o, 'FailureTarget')) return 'FailureTarget';
  if (hasCondition(o, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

function completions(o: KObject): string {
  const succeeded = num(o, 'status', 'succeeded');
  const wanted = at(o, 'spec', 'completions');
  if (typeof wanted === 'number') return `${succeeded}/${wanted}`;
  const parallelism = num(o, 'spec', 'parallelism');
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function duration(o: KObject, now: number): string {
  const start = time(o, 'status', 'startTime');
  if (start === undefined) return '';
  const end = time(o, 'status', 'completionTime');
  return humanDuration((end ?? now) - start);
}

export const JOB_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Status', 'Status of the job.', jobStatus),
  column('Completions', doc('JobStatus', 'succeeded'), completions),
  column('Duration', 'Time required to complete the job.', duration),
  ageColumn(),
  ...wideColumns('spec', 'template'),
];

export const CRONJOB_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Schedule', doc('CronJobSpec', 'schedule'), (o) => str(o, 'spec', 'schedule')),
  column('Timezone', doc('CronJobSpec', 'timeZone'), (o) => str(o, 'spec', 'timeZone') || '<none>'),
  column(
    'Suspend',
    doc('CronJobSpec', 'suspend'),
    (o) => {
      const v = at(o, 'spec', 'suspend');
      return typeof v === 'boolean' ? (v ? 'True' : 'False') : '<unset>';
    },
    { type: 'boolean' },
  ),
  column('Active', doc('CronJobStatus', 'active'), (o) => list(o, 'status', 'active').length, { type: 'integer' }),
  column('Last Schedule', doc('CronJobStatus', 'lastScheduleTime'), (o, now) => {
    const t = time(o, 'status', 'lastScheduleTime');
    return t === undefined ? '<none>' : since(t, now);
  }),
  ageColumn(),
  ...wideColumns('spec', 'jobTemplate', 'spec', 'template'),
];
