// kill -9 a process that is writing to a FileStore, then check that every
// acknowledged write survived with its revision and nothing is half-written.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '../../backends/core/store/file.js';
import { isPlainObject } from '../../lib/api/meta.js';
import { rv } from './helpers.js';

const fixture = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));
const ACKS_BEFORE_KILL = 600;

interface Acks {
  created: Map<string, number>;
  deleted: Map<string, number>;
  counters: Map<string, { rev: number; count: number }>;
  maxRev: number;
}

/** Runs the writer until it has acknowledged enough writes, then SIGKILLs it. */
function runAndKill(dir: string, run: string): Promise<Acks> {
  const acks: Acks = { created: new Map(), deleted: new Map(), counters: new Map(), maxRev: 0 };
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir, run], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = 0;
  let buffered = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`writer acknowledged only ${seen} writes in time; stderr: ${stderr}`));
    }, 30_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [what, key, rev, count] = line.split(' ');
        const r = Number(rev);
        if (!key || !Number.isSafeInteger(r)) continue;
        acks.maxRev = Math.max(acks.maxRev, r);
        if (what === 'ack') acks.created.set(key, r);
        else if (what === 'del') acks.deleted.set(key, r);
        else if (what === 'upd') acks.counters.set(key, { rev: r, count: Number(count) });
        seen++;
      }
      if (seen >= ACKS_BEFORE_KILL && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve(acks);
      else reject(new Error(`writer exited early (code ${code}): ${stderr}`));
    });
  });
}

describe('file store crash safety', () => {
  let base: string;
  after(async () => {
    if (base) await rm(base, { recursive: true, force: true });
  });

  it('keeps every acknowledged write across three kill -9 restarts', async () => {
    base = await mkdtemp(join(tmpdir(), 'gh-crash-'));
    const dir = join(base, 'store');
    const all: Acks[] = [];
    for (let run = 0; run < 3; run++) {
      const acks = await runAndKill(dir, `run${run}`);
      assert.ok(acks.created.size > 0);
      all.push(acks);
      const store = await FileStore.open({ dir, historyWindowMs: 60_000 });
      try {
        const current = await store.currentRev();
        for (const [i, a] of all.entries()) {
          assert.ok(current >= a.maxRev, `revision counter went back: ${current} < ${a.maxRev} (run ${i})`);
          for (const [key, rev] of a.created) {
            const obj = await store.get(key);
            // The writer deletes these keys right after creating them; a delete that reached disk
            // but was killed before its acknowledgement may or may not be there.
            const deletable = Number(key.split('-').pop()) % 7 === 3;
            if (a.deleted.has(key)) assert.equal(obj, undefined, `${key} was deleted at ${a.deleted.get(key)}`);
            else if (obj || !deletable) assert.equal(rv(obj), rev, `acknowledged ${key} at ${rev}`);
          }
          for (const [key, { rev, count }] of a.counters) {
            const obj = await store.get(key);
            assert.ok(obj && rv(obj) >= rev, `counter ${key} older than acknowledged ${rev}`);
            const data = obj.data as { count: number };
            assert.ok(data.count >= count, `counter ${key} lost count ${count}`);
          }
        }
        // Nothing half-written: every object, acknowledged or not, is exactly what a writer wrote.
        const listed = await store.list('core/things/');
        for (const obj of listed.items) {
          const data = obj.data;
          assert.ok(isPlainObject(data) && typeof data.key === 'string', `malformed ${JSON.stringify(obj)}`);
          assert.equal(`core/things/${data.key.split('/')[2]}/${obj.metadata.name}`, data.key);
          const name = obj.metadata.name!;
          if (name.startsWith('w')) assert.equal(data.pad, 'x'.repeat(Number(name.split('-')[1]) % 97));
          else assert.equal(typeof data.count, 'number');
          assert.ok(rv(obj) <= current);
        }
      } finally {
        await store.close();
      }
    }
  });
});
