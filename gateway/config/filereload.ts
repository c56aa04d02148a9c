// Reloads a configuration file, or a set of files read together (a
// certificate and its key, CA bundles), when it changes: fs.watch on the
// directories (so editors that replace a file are seen) plus a periodic
// re-read, as kube-apiserver does every 60 seconds. A changed content is
// built from all the files and applied in one step; content that fails to
// build or apply (a half-written pair included) keeps the previous one. Both
// outcomes are logged (and counted, given metrics), a bad content only once
// however often it is re-read.
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
  /** Read together: a change to any of them rebuilds from all. */
  readonly paths: readonly string[];
  /** The content in force now (read at start), one text per path. */
  readonly initialTexts: readonly string[];
  /** For log lines: `authentication config`, `authorization config`, `serving certificate`. */
  readonly what: string;
  /** Parses, validates and builds from one text per path; throws with a one-line message for bad content. */
  readonly build: (texts: readonly string[]) => T | Promise<T>;
  readonly apply: (built: T) => void | Promise<void>;
  /** Without it, outcomes are only logged. */
  readonly metrics?: ReloadMetrics;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  readonly pollIntervalMs?: number;
  readonly debounceMs?: number;
}

function contentHash(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** One file hashes as its content (kube's config hash); several as the JSON list of their contents, so no two sets collide. */
function hashOf(texts: readonly string[]): string {
  return contentHash(texts.length === 1 ? texts[0]! : JSON.stringify(texts));
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class FileReloader<T> {
  private appliedHash: string;
  /** The content that last failed, so a bad file is reported once, not every poll. */
  private failedHash: string | undefined;
  private readonly watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly clock: () => number;
  /** The paths as log lines name them. */
  private readonly names: string;

  constructor(private readonly opts: FileReloaderOptions<T>) {
    this.appliedHash = hashOf(opts.initialTexts);
    this.clock = opts.clock ?? Date.now;
    this.names = opts.paths.map((p) => JSON.stringify(p)).join(', ');
    opts.metrics?.configApplied?.(this.appliedHash);
  }

  start(): void {
    const { what, log } = this.opts;
    const byDir = new Map<string, Set<string>>();
    for (const p of this.opts.paths) {
      const names = byDir.get(dirname(p)) ?? new Set<string>();
      byDir.set(dirname(p), names.add(basename(p)));
    }
    for (const [dir, names] of byDir) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, file) => {
          if (file === null || names.has(file)) this.schedule();
        });
        watcher.on('error', (err) => log(`${what}: watching ${JSON.stringify(dir)} failed, polling only: ${err.message}`));
        this.watchers.push(watcher);
      } catch (err) {
        log(`${what}: cannot watch ${JSON.stringify(dir)}, polling only: ${messageOf(err)}`);
      }
    }
    this.poll = setInterval(() => this.schedule(), this.opts.pollIntervalMs ?? 60_000);
    this.poll.unref();
  }

  stop(): void {
    this.closed = true;
    for (const w of this.watchers) w.close();
    if (this.poll) clearInterval(this.poll);
    if (this.debounce) clearTimeout(this.debounce);
  }

  /** Checks the files now (tests, operators); resolves when that check is done. */
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
    const texts: string[] = [];
    for (const path of this.opts.paths) {
      try {
        texts.push(await readFile(path, 'utf8'));
      } catch (err) {
        this.fail(`cannot read ${JSON.stringify(path)}: ${messageOf(err)}`);
        return;
      }
    }
    const hash = hashOf(texts);
    if (hash === this.appliedHash || hash === this.failedHash) return;
    let built: T;
    try {
      built = await this.opts.build(texts);
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
    this.opts.metrics?.reload('success', this.clock());
    this.opts.metrics?.configApplied?.(hash);
    this.opts.log(`${this.opts.what}: reloaded ${this.names} (${hash})`);
  }

  private fail(why: string): void {
    this.opts.metrics?.reload('failure', this.clock());
    this.opts.log(`${this.opts.what}: keeping the previous configuration: ${why}`);
  }
}
