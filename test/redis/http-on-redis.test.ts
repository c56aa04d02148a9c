// The foundation's HTTP API tests (test/http), run once more with every test
// server on the Redis store (GATEHOUSE_TEST_STORAGE=redis, read by
// test/helpers/server.ts). The whole folder takes about as long as on memory.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ROOT } from '../e2e/helpers.js';
import { redisSkipReason } from '../store/fixtures/redis-env.js';

const skip = await redisSkipReason();

describe('the HTTP API tests on the redis store', { skip }, () => {
  it('pass with --storage-backend=redis', () => {
    const run = spawnSync(process.execPath, ['test/run.js', 'test/http/'], {
      cwd: ROOT,
      env: { ...process.env, GATEHOUSE_TEST_STORAGE: 'redis' },
      encoding: 'utf8',
      timeout: 540_000,
    });
    const summary = run.stdout
      .split('\n')
      .filter((l) => /^# (tests|pass|fail|cancelled)/.test(l))
      .join(', ');
    const failed = run.stdout.split('\n').filter((l) => /^\s*not ok /.test(l));
    assert.equal(run.status, 0, `test/http on redis failed (${summary}):\n${failed.join('\n')}\n${run.stderr.slice(-2000)}`);
  });
});
