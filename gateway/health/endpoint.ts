// Serves /healthz, /livez and /readyz: `verbose`, repeatable `exclude`, and
// single checks at /<endpoint>/<name>. Machines read the status code only.
import { pathNotFound } from '../../lib/api/status.js';
import type { HealthCheck } from './checks.js';

export interface HealthAnswer {
  code: number;
  body: string;
}

const CHECK_TIMEOUT_MS = 5_000;

async function run(check: HealthCheck): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(() => check.check()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}

export class HealthEndpoint {
  constructor(
    readonly name: 'healthz' | 'livez' | 'readyz',
    private readonly checks: readonly HealthCheck[],
    private readonly log: (msg: string) => void,
  ) {}

  async serve(subpath: string, query: URLSearchParams): Promise<HealthAnswer> {
    if (subpath) {
      const check = this.checks.find((c) => c.name === subpath);
      if (!check) throw pathNotFound();
      const failure = await run(check);
      if (failure === undefined) return { code: 200, body: 'ok' };
      this.log(`${this.name} check ${check.name} failed: ${failure}`);
      return { code: 500, body: `internal server error: ${check.name} check failed\n` };
    }
    const verbose = query.has('verbose') && query.get('verbose') !== 'false';
    const excluded = new Set(query.getAll('exclude'));
    const results = await Promise.all(this.checks.map(async (c) => ({ c, failure: excluded.has(c.name) ? undefined : await run(c) })));
    const lines: string[] = [];
    let failed = false;
    for (const { c, failure } of results) {
      if (excluded.has(c.name)) {
        lines.push(`[+]${c.name} excluded: ok`);
        excluded.delete(c.name);
      } else if (failure === undefined) {
        lines.push(`[+]${c.name} ok`);
      } else {
        failed = true;
        this.log(`${this.name} check ${c.name} failed: ${failure}`);
        lines.push(`[-]${c.name} failed: reason withheld`);
      }
    }
    if (excluded.size > 0) lines.push(`warn: some health checks cannot be excluded: no matches for ${[...excluded].map((e) => `"${e}"`).join(',')}`);
    if (failed) {
      return { code: 500, body: `${lines.join('\n')}\nhealthz check failed\n` };
    }
    if (!verbose) return { code: 200, body: 'ok' };
    return { code: 200, body: `${lines.join('\n')}\nhealthz check passed\n` };
  }
}
