// The grammar of --redis-url, in one place: the flag check (gateway/config/options/storage.ts)
// and the store's clients (redis-connect.ts) both parse with it.
//
//   redis://[user:password@]host[:port][/db][?ca=<PEM file>]        one Redis
//   rediss://…                                                       the same over TLS (ca: the CA that signed Redis's certificate)
//   redis://[user:password@]host:port,host:port[,…][?ca=…]          a Redis Cluster (several seeds)
//   redis+cluster://[user:password@]host:port[,…]  (and rediss+cluster://)   a Redis Cluster, even from one seed
//   unix://[user:password@]/path/to/redis.sock[?db=N]               one Redis on a Unix socket (also redis+unix://,
//                                                                    the spellings of redis-py, go-redis and redis-rs)
// A cluster has no databases: a /db other than 0 is refused.

import { ConfigError } from '../../../lib/config/error.js';

export interface ParsedRedisUrl {
  tls: boolean;
  cluster: boolean;
  /** TCP addresses; empty for a Unix socket. */
  hosts: { host: string; port: number }[];
  /** The Unix socket's path (unix:// and redis+unix://). */
  path?: string;
  username?: string;
  password?: string;
  db: number;
  /** Path of the CA bundle (rediss only). */
  ca?: string;
}

const URL_RE = /^(rediss?)(\+cluster)?:\/\/(?:([^@/?#]*)@)?([^/?#]+)(?:\/([^?#]*))?(?:\?([^#]*))?$/;
const UNIX_RE = /^(?:redis\+)?unix:\/\/(?:([^@/?#]*)@)?(\/[^?#]*)(?:\?([^#]*))?$/;

export const REDIS_URL_FORMS =
  'redis://, rediss://, redis+cluster:// or rediss+cluster://[user:password@]host:port[,host:port…][/db][?ca=file], or unix://[user:password@]/path/to/redis.sock[?db=N]';

/** Parses --redis-url; throws a ConfigError naming the problem and showing the URL without credentials. */
export function parseRedisUrl(url: string): ParsedRedisUrl {
  const bad = (why: string): Error => new ConfigError(why, { kind: 'redis url', value: redact(url) });
  const unix = UNIX_RE.exec(url);
  if (unix) return unixSocket(unix, bad);
  const m = URL_RE.exec(url);
  if (!m) throw bad(`want ${REDIS_URL_FORMS}`);
  const [, scheme, plus, userinfo, hostlist, path, query] = m;
  const hosts = hostlist!.split(',').map((h) => {
    const hm = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]*))(?::([0-9]{1,5}))?$/.exec(h);
    if (!hm) throw bad(`bad host "${h}"`);
    const port = hm[3] === undefined ? 6379 : Number(hm[3]);
    if (port < 1 || port > 65535) throw bad(`bad port in "${h}"`);
    return { host: hm[1] ?? (hm[2] || '127.0.0.1'), port };
  });
  const db = path ?? '';
  if (db !== '' && !/^[0-9]+$/.test(db)) throw bad('database must be a number');
  const cluster = plus !== undefined || hosts.length > 1;
  if (cluster && db !== '' && Number(db) !== 0) throw bad('a Redis Cluster has no databases other than 0');
  const out: ParsedRedisUrl = { tls: scheme === 'rediss', cluster, hosts, db: db === '' ? 0 : Number(db) };
  credentials(out, userinfo, bad);
  for (const [k, v] of new URLSearchParams(query ?? '')) {
    if (k !== 'ca') throw bad(`unknown parameter "${k}" (known: ca)`);
    if (!out.tls) throw bad('ca= needs rediss://');
    out.ca = v;
  }
  return out;
}

/** unix://[user:password@]/path[?db=N]: the path is percent-decoded; db the only parameter (as redis-py and go-redis read it). */
function unixSocket(m: RegExpExecArray, bad: (why: string) => Error): ParsedRedisUrl {
  const [, userinfo, rawPath, query] = m;
  let path: string;
  try {
    path = decodeURIComponent(rawPath!);
  } catch {
    throw bad('bad percent-encoding in the socket path');
  }
  if (path.length < 2 || path.endsWith('/') || path.includes('\0')) throw bad("want the socket file's absolute path, e.g. unix:///run/redis/redis.sock");
  const out: ParsedRedisUrl = { tls: false, cluster: false, hosts: [], path, db: 0 };
  credentials(out, userinfo, bad);
  for (const [k, v] of new URLSearchParams(query ?? '')) {
    if (k !== 'db') throw bad(`unknown parameter "${k}" (known for a Unix socket: db)`);
    if (!/^[0-9]+$/.test(v)) throw bad('database must be a number');
    out.db = Number(v);
  }
  return out;
}

function credentials(out: ParsedRedisUrl, userinfo: string | undefined, bad: (why: string) => Error): void {
  if (!userinfo) return;
  const colon = userinfo.indexOf(':');
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
  const pass = colon < 0 ? '' : userinfo.slice(colon + 1);
  try {
    if (user) out.username = decodeURIComponent(user);
    if (pass) out.password = decodeURIComponent(pass);
  } catch {
    throw bad('bad percent-encoding in the credentials');
  }
}

/** The URL with its credentials replaced by `***` (for messages and logs). */
export function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
