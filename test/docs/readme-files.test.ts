// A folder README's files table names files that exist: every `….ts` in
// backticks in the first cell of a table row is a path from that folder or,
// failing that, from the repository's root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { folderReadmes, root } from './readmes.js';

test('the files a README table names exist', () => {
  const problems: string[] = [];
  for (const readme of folderReadmes()) {
    for (const line of readme.text.split('\n')) {
      if (!line.startsWith('|')) continue;
      const first = line.split('|')[1] ?? '';
      for (const m of first.matchAll(/`([^`\s]+\.ts)`/g)) {
        if (m[1].includes('*') || m[1].startsWith('-')) continue;
        if (!existsSync(join(root, readme.folder, m[1])) && !existsSync(join(root, m[1]))) problems.push(`${readme.folder}/README.md names ${m[1]}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});
