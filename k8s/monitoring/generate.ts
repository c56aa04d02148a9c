// Writes the monitoring files from k8s/monitoring/source/ (rules, their
// promtool tests, runbooks, scrape configuration, ServiceMonitor and RBAC,
// dashboards). `--check` writes nothing and fails when a committed file
// differs from what the source makes; `--runbook-base=<url>` prefixes every
// runbook_url (for docs hosted elsewhere) instead of the repository path.
//
//   node --import tsx k8s/monitoring/generate.ts [--check] [--runbook-base=https://…/docs/runbooks/]
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { render } from './source/render.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const check = args.includes('--check');
const base = args.find((a) => a.startsWith('--runbook-base='))?.slice('--runbook-base='.length);

let stale = 0;
for (const [path, content] of render(base === undefined ? {} : { runbookBase: base })) {
  const file = join(root, path);
  const now = await readFile(file, 'utf8').catch(() => undefined);
  if (now === content) continue;
  if (check) {
    process.stderr.write(`${path} differs from what k8s/monitoring/source makes\n`);
    stale++;
    continue;
  }
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, content);
  process.stdout.write(`wrote ${path}\n`);
}
if (stale > 0) process.exit(1);
