// kube-rbac-proxy's configuration file read at start (a problem stops the
// start, naming the flag, file and field) and followed afterwards: a changed
// file is parsed and swapped in whole; a bad one keeps the previous
// configuration (gateway/config/filereload.ts, which logs why).
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../lib/config/error.js';
import { FileReloader } from '../config/filereload.js';
import { parseProxyConfig, type ProxyConfig } from './proxyconfig.js';
import type { ProxyConfigSource } from './proxyauthz.js';

export interface FollowedProxyConfig extends ProxyConfigSource {
  /** Checks the file now (tests). */
  reload(): Promise<void>;
  close(): void;
}

const NONE: FollowedProxyConfig = Object.freeze({ current: undefined, reload: async () => undefined, close: () => undefined });

export async function followProxyConfig(
  file: string | undefined,
  flag: string,
  o: { log: (msg: string) => void; clock: () => number; pollIntervalMs?: number },
): Promise<FollowedProxyConfig> {
  if (file === undefined) return NONE;
  const parse = (text: string): ProxyConfig => {
    try {
      return parseProxyConfig(text);
    } catch (err) {
      throw err instanceof ConfigError ? new ConfigError(err.reason, { flag, file }) : err;
    }
  };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(err), { flag, file });
  }
  const holder = { current: parse(text) as ProxyConfig | undefined };
  const reloader = new FileReloader<ProxyConfig>({
    paths: [file],
    initialTexts: [text],
    what: `${flag} ${file}`,
    build: ([t]) => parse(t!),
    apply: (next) => {
      holder.current = next;
      o.log(`sidecar: ${flag} ${file} reloaded`);
    },
    log: o.log,
    clock: o.clock,
    ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}),
  });
  reloader.start();
  return {
    get current() {
      return holder.current;
    },
    reload: () => reloader.check(),
    close: () => reloader.stop(),
  };
}
