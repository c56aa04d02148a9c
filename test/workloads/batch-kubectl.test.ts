// batch/v1 through kubectl against a started server: `kubectl create job`
// and `create cronjob`, kube's defaults and generated selector, `kubectl get`
// columns, status only through /status, immutable job templates, the three
// patches, server-side apply without a diff the second time, and delete.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const BATCH = '/apis/batch/v1/namespaces/default';

describe('batch/v1 with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('creates a job with kube defaults and a generated selector', async () => {
    assert.match(await ctx.k.ok(['create', 'job', 'once', '--image=busybox:1.36', '--', 'true']), /job.batch\/once created/);
    const j = (await ctx.s.admin.request('GET', `${BATCH}/jobs/once`)).json;
    const uid = j.metadata.uid;
    assert.deepEqual(j.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    assert.deepEqual(j.spec.template.metadata.labels, {
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': 'once',
      'controller-uid': uid,
      'job-name': 'once',
    });
    assert.deepEqual(j.metadata.labels, j.spec.template.metadata.labels);
    assert.equal(j.spec.completions, 1);
    assert.equal(j.spec.parallelism, 1);
    assert.equal(j.spec.backoffLimit, 6);
    assert.equal(j.spec.completionMode, 'NonIndexed');
    assert.equal(j.spec.suspend, false);
    assert.equal(j.spec.podReplacementPolicy, 'TerminatingOrFailed');
    assert.equal(j.spec.template.spec.restartPolicy, 'Never');
    assert.equal(j.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    assert.equal(j.metadata.generation, 1);
  });

  it('shows job columns and status written through /status', async () => {
    const st = await ctx.s.admin.request(
      'PATCH',
      `${BATCH}/jobs/once/status`,
      {
        status: {
          startTime: '2026-01-01T00:00:00Z',
          completionTime: '2026-01-01T00:01:05Z',
          succeeded: 1,
          conditions: [{ type: 'Complete', status: 'True' }],
        },
      },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(st.status, 200, st.text);
    const [head, row] = (await ctx.k.ok(['get', 'job', 'once'])).trim().split('\n');
    assert.deepEqual(head!.trim().split(/\s{2,}/), ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE']);
    assert.deepEqual(row!.split(/\s+/).slice(0, 4), ['once', 'Complete', '1/1', '65s']);
  });

  it('refuses a changed job template and a template restarting Always', async () => {
    const r = await ctx.k.run([
      'patch',
      'job',
      'once',
      '--type=strategic',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"once","image":"busybox:1.37"}]}}}}',
    ]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec.template: Invalid value: .*: field is immutable/);
    const bad = await ctx.s.admin.request('POST', `${BATCH}/jobs`, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'bad' },
      spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(bad.json.details.causes, [
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.template.spec.restartPolicy',
        message: 'Unsupported value: "Always": supported values: "OnFailure", "Never"',
      },
    ]);
    // A mutable field still patches: merge and JSON patch.
    await ctx.k.ok(['patch', 'job', 'once', '--type=merge', '-p', '{"spec":{"ttlSecondsAfterFinished":60}}']);
    await ctx.k.ok(['patch', 'job', 'once', '--type=json', '-p', '[{"op":"replace","path":"/spec/backoffLimit","value":2}]']);
    const j = (await ctx.s.admin.request('GET', `${BATCH}/jobs/once`)).json;
    assert.equal(j.spec.ttlSecondsAfterFinished, 60);
    assert.equal(j.spec.backoffLimit, 2);
    assert.equal(j.metadata.generation, 3);
  });

  it('creates cron jobs with defaults, columns and apply without a diff', async () => {
    assert.match(await ctx.k.ok(['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *', '--', 'date']), /cronjob.batch\/nightly created/);
    const cj = (await ctx.s.admin.request('GET', `${BATCH}/cronjobs/nightly`)).json;
    assert.equal(cj.spec.concurrencyPolicy, 'Allow');
    assert.equal(cj.spec.suspend, false);
    assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
    assert.equal(cj.spec.failedJobsHistoryLimit, 1);
    assert.equal(cj.spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy, 'Always');
    const manifest = [
      'apiVersion: batch/v1',
      'kind: CronJob',
      'metadata: {name: hourly}',
      'spec:',
      '  schedule: "@hourly"',
      '  timeZone: Etc/UTC',
      '  jobTemplate:',
      '    spec:',
      '      template:',
      '        spec: {restartPolicy: OnFailure, containers: [{name: c, image: "busybox:1.36"}]}',
      '',
    ].join('\n');
    await ctx.k.ok(['apply', '--server-side', '-f', '-'], manifest);
    const diff = await ctx.k.run(['diff', '--server-side', '-f', '-'], manifest);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    const out = await ctx.k.ok(['get', 'cronjobs']);
    const lines = out.trim().split('\n');
    assert.deepEqual(lines[0]!.trim().split(/\s{2,}/), ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE']);
    assert.deepEqual(lines[1]!.split(/\s+/).slice(0, 5), ['hourly', '@hourly', 'Etc/UTC', 'False', '0']);
    assert.match(lines[2]!, /^nightly\s+0 3 \* \* \*\s+<none>\s+False\s+0\s+<none>\s+\S+$/);
    const bad = await ctx.k.run(['create', 'cronjob', 'bad', '--image=busybox', '--schedule=* * *']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec.schedule: Invalid value: "\* \* \*": expected exactly 5 fields, found 3: \[\* \* \*\]/);
  });

  it('lists every batch kind together and deletes them', async () => {
    const out = await ctx.k.ok(['get', 'job,cronjob', '--no-headers']);
    assert.match(out, /^job.batch\/once\s/m);
    assert.match(out, /^cronjob.batch\/hourly\s/m);
    await ctx.k.ok(['delete', 'job/once', 'cronjob/hourly', 'cronjob/nightly']);
    assert.equal((await ctx.s.admin.request('GET', `${BATCH}/jobs/once`)).status, 404);
  });
});
