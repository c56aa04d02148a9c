// The authorization configuration controller: re-reads --authorization-config
// when the file changes (fs.watch on its directory, so editors that replace
// the file are seen) and every 60 seconds. A changed file is parsed,
// validated and built into a whole new chain, which replaces the old one in
// one step; a bad file keeps the old chain. Both outcomes are logged and
// counted.
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { AuthzConfigMetrics } from '../metrics/authz.js';

export interface AuthzReloadOptions<T> {
  readonly path: string;
  readonly initialText: string;
  /** Parses, validates and builds; throws (or rejects) with a one-line message for a bad file. */
  readonly build: (text: string) => Promise<T>;
  readonly apply: (built: T) => void;
  readonly metrics: AuthzConfigMetrics;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  readonly pollIntervalMs?: number;
  readonly debounceMs?: number;
}

const hashOf = (text: string): string => createHash('sha256').update(text).digest('hex');

export class AuthzConfigController<T> {
  private appliedHash: string;
  private failedHash: string | undefined;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly clock: () => number;

  constructor(private readonly opts: AuthzReloadOptions<T>) {
    this.appliedHash = hashOf(opts.initialText);
    this.clock = opts.clock ?? Date.now;
  }

  start(): void {
    const name = basename(this.opts.path);
    try {
      this.watcher = watch(dirname(this.opts.path), { persistent: false }, (_event, file) => {
        if (file === null || file === name) this.schedule();
      });
      this.watcher.on('error', (err) => this.opts.log(`authorization config: watching ${JSON.stringify(this.opts.path)} failed, polling only: ${err.message}`));
    } catch (err) {
      this.opts.log(`authorization config: cannot watch ${JSON.stringify(this.opts.path)}, polling only: ${err instanceof Error ? err.message : String(err)}`);
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

  /** Checks the file now; resolves when that check is done (tests, operators). */
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
    const hash = hashOf(text);
    if (hash === this.appliedHash || hash === this.failedHash) return;
    let built: T;
    try {
      built = await this.opts.build(text);
    } catch (err) {
      this.failedHash = hash;
      this.fail(err instanceof Error ? err.message : String(err));
      return;
    }
    if (this.closed) return;
    this.opts.apply(built);
    this.appliedHash = hash;
    this.failedHash = undefined;
    this.opts.metrics.reload('success', this.clock());
    this.opts.log(`authorization config: reloaded ${JSON.stringify(this.opts.path)} (sha256:${hash})`);
  }

  private fail(why: string): void {
    this.opts.metrics.reload('failure', this.clock());
    this.opts.log(`authorization config: keeping the previous configuration: ${why}`);
  }
}
