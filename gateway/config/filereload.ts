// Reloads a configuration file when it changes: fs.watch on its directory
// (so editors that replace the file are seen) plus a periodic re-read, as
// kube-apiserver does every 60 seconds. A changed content is built and
// applied in one step; a file that fails to build or apply keeps the
// previous configuration. Both outcomes are logged and counted, a bad
// content only once however often it is re-read.
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export interface ReloadMetrics {
  reload(status: 'success' | 'failure', atMs: number): void;
  /** Told the hash of the content in force, at start and after each successful reload. */
  configApplied?(hash: string): void;
}

export interface FileReloaderOptions<T> {
  readonly path: string;
  /** The content in force now (read at start). */
  readonly initialText: string;
  /** For log lines: `authentication config`, `authorization config`. */
  readonly what: string;
  /** Parses, validates and builds; throws with a one-line message for a bad file. */
  readonly build: (text: string) => T | Promise<T>;
  readonly apply: (built: T) => void | Promise<void>;
  readonly metrics: ReloadMetrics;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  readonly pollIntervalMs?: number;
  readonly debounceMs?: number;
}

export function contentHash(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class FileReloader<T> {
  private appliedHash: string;
  /** The content that last failed, so a bad file is reported once, not every poll. */
  private failedHash: string | undefined;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly clock: () => number;

  constructor(private readonly opts: FileReloaderOptions<T>) {
    this.appliedHash = contentHash(opts.initialText);
    this.clock = opts.clock ?? Date.now;
    opts.metrics.configApplied?.(this.appliedHash);
  }

  start(): void {
    const { path, what, log } = this.opts;
    const name = basename(path);
    try {
      this.watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
        if (file === null || file === name) this.schedule();
      });
      this.watcher.on('error', (err) => log(`${what}: watching ${JSON.stringify(path)} failed, polling only: ${err.message}`));
    } catch (err) {
      log(`${what}: cannot watch ${JSON.stringify(path)}, polling only: ${messageOf(err)}`);
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

  /** Checks the file now (tests, operators); resolves when that check is done. */
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
      this.fail(`cannot read ${JSON.stringify(this.opts.path)}: ${messageOf(err)}`);
      return;
    }
    const hash = contentHash(text);
    if (hash === this.appliedHash || hash === this.failedHash) return;
    let built: T;
    try {
      built = await this.opts.build(text);
    } catch (err) {
      this.failedHash = hash;
      this.fail(messageOf(err));
      return;
    }
    if (this.closed) return;
    try {
      await this.opts.apply(built);
    } catch (err) {
      this.failedHash = hash;
      this.fail(`cannot apply: ${messageOf(err)}`);
      return;
    }
    this.appliedHash = hash;
    this.failedHash = undefined;
    this.opts.metrics.reload('success', this.clock());
    this.opts.metrics.configApplied?.(hash);
    this.opts.log(`${this.opts.what}: reloaded ${JSON.stringify(this.opts.path)} (${hash})`);
  }

  private fail(why: string): void {
    this.opts.metrics.reload('failure', this.clock());
    this.opts.log(`${this.opts.what}: keeping the previous configuration: ${why}`);
  }
}
