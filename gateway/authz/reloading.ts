// The chain of an --authorization-config file, kept current: the file is
// watched (FileReloader: fs.watch on its directory and a re-read every 60 s),
// a changed file is parsed and a whole new chain built, then swapped in one
// step, so a request sees one configuration. A bad file keeps the chain in
// force; both outcomes are logged and counted
// (apiserver_authorization_config_controller_automatic_reloads_total).
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../lib/config/error.js';
import { FileReloader } from '../config/filereload.js';
import { authzConfigMetrics } from '../metrics/authz.js';
import { apiServerIdHash } from '../metrics/registry.js';
import { parseAuthorizationConfig, type AuthorizationConfig } from './config.js';
import type { ConfiguredChain } from './configured.js';
import { SwappableAuthorizer } from './instrumented.js';
import type { Authorizer } from './types.js';

export interface ReloadingChainOptions {
  readonly path: string;
  /** Builds the chain of one configuration; throws with a one-line message. */
  readonly build: (config: AuthorizationConfig) => Promise<ConfiguredChain>;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  readonly pollIntervalMs?: number;
  readonly apiServerId?: string;
}

export interface ReloadingChain {
  /** Always asks the chain in force. */
  readonly authorizer: Authorizer;
  current(): ConfiguredChain;
  /** Re-reads the file now; resolves when done. */
  reload(): Promise<void>;
  close(): void;
}

/** How long a replaced chain's webhook clients live on, so requests already in them can finish. */
const RETIRE_AFTER_MS = 35_000;

/** Reads, builds and starts watching; a file that cannot be read or built at start is an error. */
export async function startReloadingChain(o: ReloadingChainOptions): Promise<ReloadingChain> {
  const { path } = o;
  const build = async (text: string): Promise<ConfiguredChain> => {
    const parsed = parseAuthorizationConfig(text, path);
    if ('error' in parsed) throw new Error(parsed.error);
    try {
      return await o.build(parsed.config);
    } catch (err) {
      throw new ConfigError(err instanceof Error ? err.message : String(err), { kind: 'authorization configuration', value: path });
    }
  };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError((err as NodeJS.ErrnoException).code ?? String(err), { flag: '--authorization-config', value: path });
  }
  let current = await build(text);
  const holder = new SwappableAuthorizer(current.authorizer);
  const retiring = new Set<NodeJS.Timeout>();
  const reloader = new FileReloader<ConfiguredChain>({
    paths: [path],
    initialTexts: [text],
    what: 'authorization config',
    build: ([t]) => build(t),
    apply: (next) => {
      holder.swap(next.authorizer);
      const old = current;
      current = next;
      const t = setTimeout(() => {
        retiring.delete(t);
        old.close();
      }, RETIRE_AFTER_MS);
      t.unref();
      retiring.add(t);
    },
    metrics: authzConfigMetrics(apiServerIdHash(o.apiServerId ?? `apiserver-${randomUUID()}`)),
    log: o.log,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}),
  });
  reloader.start();
  return {
    authorizer: holder,
    current: () => current,
    reload: () => reloader.check(),
    close: () => {
      reloader.stop();
      for (const t of retiring) clearTimeout(t);
      current.close();
    },
  };
}
