// docs/decisions holds one dated file per decision: its name starts with the
// date its first line under the title states ("Decided …" or "Recorded …"),
// the index lists every file once, and every docs/decisions/… file a README
// or another decision names exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { folderReadmes, root } from './readmes.js';

const dir = join(root, 'docs', 'decisions');
const files = readdirSync(dir).filter((f) => f !== 'README.md' && f.endsWith('.md'));

test('each decision is named by its date and says it', () => {
  const problems: string[] = [];
  for (const f of files) {
    const m = /^(\d{4}-\d{2}-\d{2})-[a-z0-9-]+\.md$/.exec(f);
    if (!m) {
      problems.push(`${f}: not <YYYY-MM-DD>-<slug>.md`);
      continue;
    }
    const text = readFileSync(join(dir, f), 'utf8');
    if (!text.startsWith('# ')) problems.push(`${f}: no title`);
    if (!new RegExp(`^(Decided|Recorded) ${m[1]}`, 'm').test(text)) problems.push(`${f}: no "Decided ${m[1]}" or "Recorded ${m[1]}" line`);
  }
  assert.deepEqual(problems, []);
});

test('the index lists every decision once', () => {
  const index = readFileSync(join(dir, 'README.md'), 'utf8');
  const listed = [...index.matchAll(/\]\(([^)]+\.md)\)/g)].map((m) => m[1]);
  assert.deepEqual([...listed].sort(), [...files].sort());
});

test('every decision a README or a decision names exists', () => {
  const texts = [
    ...folderReadmes().map((r) => ({ name: `${r.folder}/README.md`, text: r.text })),
    { name: 'README.md', text: readFileSync(join(root, 'README.md'), 'utf8') },
    ...files.map((f) => ({ name: `docs/decisions/${f}`, text: readFileSync(join(dir, f), 'utf8') })),
  ];
  const missing: string[] = [];
  for (const { name, text } of texts) {
    for (const m of text.matchAll(/(\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md)/g)) {
      if (!existsSync(join(dir, m[1]))) missing.push(`${name} names ${m[1]}`);
    }
  }
  assert.deepEqual(missing, []);
});
