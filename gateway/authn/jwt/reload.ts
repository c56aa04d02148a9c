// The authentication configuration controller: watches the file (fs.watch on
// its directory, so editors that replace the file are seen, plus a periodic
// read as fallback), and on a changed content parses, validates, builds and
// swaps. A bad new file keeps the old configuration; both outcomes are
// logged and counted.
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { AuthnConfigMetrics } from '../../metrics/authnconfig.js';
import type { AuthenticationConfig } from '../../config/authnconfig-types.js';

export interface ConfigControllerOptions {
  readonly path: string;
  /** The content that is applied now (read at start). */
  readonly initialText: string;
  readonly parse: (text: string) => { config: AuthenticationConfig } | { error: string };
  readonly apply: (config: AuthenticationConfig) => Promise<void>;
  readonly metrics: AuthnConfigMetrics;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  /** kube re-reads the file every minute even without a change event. */
  readonly pollIntervalMs?: number;
  readonly debounceMs?: number;
}

export function contentHash(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

export class AuthnConfigController {
  private appliedHash: string;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly clock: () => number;

  constructor(private readonly opts: ConfigControllerOptions) {
    this.appliedHash = contentHash(opts.initialText);
    this.clock = opts.clock ?? Date.now;
    opts.metrics.configApplied(this.appliedHash);
  }

  start(): void {
    const name = basename(this.opts.path);
    try {
      this.watcher = watch(dirname(this.opts.path), { persistent: false }, (_event, file) => {
        if (file === null || file === name) this.schedule();
      });
      this.watcher.on('error', (err) => this.opts.log(`authentication config: watching ${JSON.stringify(this.opts.path)} failed, polling only: ${err.message}`));
    } catch (err) {
      this.opts.log(`authentication config: cannot watch ${JSON.stringify(this.opts.path)}, polling only: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.poll = setInterval(() => this.schedule(), this.opts.pollIntervalMs ?? 60_000);
    this.poll.unref();
  }

  stop(): void {
    this.closed = true;
    this.watcher?.close();
    if (this.poll) clearInterval(this.poll);
    if (this.debounce) clearTimeout(this.debounce);
  }

  /** Checks the file now (tests, SIGHUP); resolves when that check is done. */
  check(): Promise<void> {
    this.running = this.running.then(() => this.reloadIfChanged());
    return this.running;
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.check(), this.opts.debounceMs ?? 100);
    this.debounce.unref();
  }

  private async reloadIfChanged(): Promise<void> {
    if (this.closed) return;
    let text: string;
    try {
      text = await readFile(this.opts.path, 'utf8');
    } catch (err) {
      this.fail(`cannot read ${JSON.stringify(this.opts.path)}: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const hash = contentHash(text);
    if (hash === this.appliedHash || hash === this.failedHash) return;
    const parsed = this.opts.parse(text);
    if ('error' in parsed) {
      this.failedHash = hash;
      this.fail(parsed.error);
      return;
    }
    try {
      await this.opts.apply(parsed.config);
    } catch (err) {
      this.failedHash = hash;
      this.fail(`cannot apply: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    this.appliedHash = hash;
    this.failedHash = undefined;
    this.opts.metrics.reload('success', this.clock());
    this.opts.metrics.configApplied(hash);
    this.opts.log(`authentication config: reloaded ${JSON.stringify(this.opts.path)} (${hash})`);
  }

  /** The content that last failed, so a bad file is reported once, not every poll. */
  private failedHash: string | undefined;

  private fail(why: string): void {
    this.opts.metrics.reload('failure', this.clock());
    this.opts.log(`authentication config: keeping the previous configuration: ${why}`);
  }
}
