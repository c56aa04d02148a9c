// Filesystem steps of the file store that need care: directory fsync (so a
// created or renamed file survives power loss) and the single-owner lock.
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from './types.js';

function errCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errCode(err) === 'EPERM'; // exists, owned by someone else
  }
}

export interface DirLock {
  release(): Promise<void>;
}

/**
 * Takes `<dir>/LOCK` for this process. Two writers appending to one log would
 * interleave batches, so a second open fails while the owner lives; a lock
 * left by a killed process is taken over.
 */
export async function acquireLock(dir: string): Promise<DirLock> {
  const path = join(dir, 'LOCK');
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      return { release: () => rm(path, { force: true }) };
    } catch (err) {
      if (errCode(err) !== 'EEXIST' || attempt > 0) throw err;
    }
    const pid = Number((await readIfExists(path))?.toString('utf8').trim());
    if (Number.isSafeInteger(pid) && pid > 0 && alive(pid)) {
      throw new StoreError('unreachable', `store directory "${dir}" is in use by process ${pid}`);
    }
    await rm(path, { force: true });
  }
}
