// Each folder README's one `Imports:` line names exactly the project folders
// that its .ts files import. A folder is named by the first two segments of
// its path (`lib/api`, `gateway/authn`), or by one for a top-level folder
// without subfolders (`certs`); the README's own folder is never named.
// Only relative specifiers count: `import … from '…'`, `export … from '…'`,
// `import '…'` and `import('…')` with a literal. The tree is prettier-formatted
// (single quotes), so a regular expression over the source reads them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { folderReadmes, isDirectory, readmeOwner, root, type FolderReadme } from './readmes.js';

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^;]*?\sfrom\s*'([^']+)'|import\(\s*'([^']+)'\s*\)|^import\s+'([^']+)'/gms;

export function specifiers(source: string): string[] {
  return [...source.matchAll(SPECIFIER)].map((m) => m[1] ?? m[2] ?? m[3]).filter((s) => s.startsWith('.'));
}

function folderName(dir: string): string {
  const segments = dir.split('/');
  if (segments.length > 1) return segments.slice(0, 2).join('/');
  const hasSubfolders = readdirSync(join(root, dir), { withFileTypes: true }).some((e) => e.isDirectory());
  return hasSubfolders ? dir : segments[0];
}

function realImports(readme: FolderReadme, readmes: FolderReadme[]): Set<string> {
  const names = new Set<string>();
  for (const file of readme.files) {
    for (const spec of specifiers(readFileSync(join(root, file), 'utf8'))) {
      const target = posix.normalize(posix.join(posix.dirname(file), spec));
      const dir = isDirectory(target) ? target : posix.dirname(target);
      if (dir.startsWith('..') || readmeOwner(readmes, dir) === readme.folder) continue;
      const name = folderName(dir);
      if (name !== readme.folder) names.add(name);
    }
  }
  return names;
}

function declaredImports(text: string): Set<string> | string {
  const lines = text.split('\n').filter((l) => l.startsWith('Imports:'));
  if (lines.length !== 1) return `${lines.length} lines start with "Imports:" (one is wanted)`;
  const list = lines[0]
    .slice('Imports:'.length)
    .trim()
    .replace(/\.$/, '')
    .split(',')
    .map((s) =>
      s
        .trim()
        .replace(/^`(.*)`$/, '$1')
        .replace(/\/$/, ''),
    );
  return new Set(list.length === 1 && list[0] === 'none' ? [] : list);
}

test('the specifier reader finds every form of relative import', () => {
  const source = [
    "import { a } from './a.js';",
    "import type {\n  B,\n  C,\n} from '../b/c.js';",
    "export * from './d.js';",
    "export { e } from './e.js';",
    "import './side.js';",
    "const f = await import('./f.js');",
    "import { g } from 'node:fs';",
    "// import nothing from here: a comment's words are not a statement",
  ].join('\n');
  assert.deepEqual(specifiers(source), ['./a.js', '../b/c.js', './d.js', './e.js', './side.js', './f.js']);
});

test("every folder README's Imports line names the folders its code imports", () => {
  const readmes = folderReadmes();
  assert.ok(readmes.some((r) => r.folder === 'gateway') && readmes.some((r) => r.folder === 'lib/api' || r.folder === 'lib'));
  const problems: string[] = [];
  for (const readme of readmes) {
    const declared = declaredImports(readme.text);
    if (typeof declared === 'string') {
      problems.push(`${readme.folder}/README.md: ${declared}`);
      continue;
    }
    const real = realImports(readme, readmes);
    const missing = [...real].filter((n) => !declared.has(n)).sort();
    const extra = [...declared].filter((n) => !real.has(n)).sort();
    if (missing.length > 0 || extra.length > 0) {
      const parts = [missing.length > 0 ? `missing ${missing.join(', ')}` : '', extra.length > 0 ? `extra ${extra.join(', ')}` : ''];
      problems.push(`${readme.folder}/README.md: ${parts.filter(Boolean).join('; ')} (real: ${[...real].sort().join(', ') || 'none'})`);
    }
  }
  assert.deepEqual(problems, []);
});
