// Debian's `prometheus` package gives the tests promtool and a Prometheus
// server; without it they skip with the reason, and fail under CI=true
// (.ci/run installs it).
import { spawnSync } from 'node:child_process';

/** The reason a tool cannot run here, or undefined when it runs. */
export function missing(tool: 'promtool' | 'prometheus'): string | undefined {
  const r = spawnSync(tool, ['--version'], { stdio: 'ignore' });
  if (r.status === 0) return undefined;
  const reason = `${tool} is not on PATH (Debian's prometheus package)`;
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: the monitoring tests must run)`);
  console.log(`# skipping: ${reason}`);
  return reason;
}
