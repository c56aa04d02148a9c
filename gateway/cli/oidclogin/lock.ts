// One login per account at a time: kubectl runs the plugin once per call and
// scripts run kubectl in parallel, so the first caller logs in and the others
// wait, then find its tokens in the cache. The lock is a file created with
// O_EXCL holding the owner's pid; a lock whose owner died is taken over.
import { openSync, closeSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Lock {
  release(): void;
}

function ownerAlive(file: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return true; // just released or being written: look again
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes `file` as a lock, waiting up to `timeoutMs` for another process to release it. */
export async function acquireLock(file: string, timeoutMs: number, onWait: () => void): Promise<Lock> {
  const deadline = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return {
        release() {
          try {
            unlinkSync(file);
          } catch {
            // already gone: nothing to release
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (!ownerAlive(file)) {
      try {
        unlinkSync(file);
      } catch {
        // another waiter removed it first
      }
      continue;
    }
    if (Date.now() >= deadline) throw new Error(`another login holds ${file} and did not finish in time`);
    if (!told) {
      told = true;
      onWait();
    }
    await sleep(100);
  }
}
