// The grammar of --redis-url (backends/core/store/redis-url.ts): what each form parses to, and what is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../lib/config/error.js';
import { parseRedisUrl, redact, type ParsedRedisUrl } from '../../backends/core/store/redis-url.js';

describe('--redis-url forms', () => {
  const good: [string, Partial<ParsedRedisUrl>][] = [
    ['redis://127.0.0.1:6379', { tls: false, cluster: false, hosts: [{ host: '127.0.0.1', port: 6379 }], db: 0 }],
    ['redis://redis', { hosts: [{ host: 'redis', port: 6379 }] }],
    ['redis://u:p%40ss@h:7/3', { username: 'u', password: 'p@ss', hosts: [{ host: 'h', port: 7 }], db: 3 }],
    ['redis://[::1]:6380', { hosts: [{ host: '::1', port: 6380 }] }],
    ['rediss://h:6380?ca=%2Fetc%2Fca.pem', { tls: true, ca: '/etc/ca.pem' }],
    [
      'redis://a:1,b:2',
      {
        cluster: true,
        hosts: [
          { host: 'a', port: 1 },
          { host: 'b', port: 2 },
        ],
      },
    ],
    ['redis+cluster://a:1', { cluster: true, hosts: [{ host: 'a', port: 1 }] }],
    ['unix:///run/redis/redis.sock', { tls: false, cluster: false, hosts: [], path: '/run/redis/redis.sock', db: 0 }],
    ['redis+unix:///tmp/r.sock?db=4', { path: '/tmp/r.sock', db: 4 }],
    ['unix://gh:s%3Acret@/tmp/my%20dir/r.sock', { username: 'gh', password: 's:cret', path: '/tmp/my dir/r.sock' }],
    ['unix://:onlypass@/tmp/r.sock', { password: 'onlypass', path: '/tmp/r.sock' }],
  ];
  for (const [url, want] of good) {
    it(`parses ${url}`, () => {
      const p = parseRedisUrl(url);
      for (const [k, v] of Object.entries(want)) assert.deepEqual(p[k as keyof ParsedRedisUrl], v, k);
      if (want.path === undefined) assert.equal(p.path, undefined);
    });
  }

  const bad: [string, string][] = [
    ['http://h', 'want redis://'],
    ['redis://h:0', 'bad port in "h:0"'],
    ['redis://my host:6379', 'bad host "my host:6379"'],
    ['redis://h/x', 'database must be a number'],
    ['redis://h?ca=c', 'ca= needs rediss://'],
    ['rediss://h?tls=1', 'unknown parameter "tls" (known: ca)'],
    ['redis+cluster://h/2', 'a Redis Cluster has no databases other than 0'],
    ['unix://relative.sock', 'want redis://'],
    ['unix:///', "want the socket file's absolute path"],
    ['unix:///run/redis/', "want the socket file's absolute path"],
    ['unix:///tmp/r%00.sock', "want the socket file's absolute path"],
    ['unix:///tmp/r%zz.sock', 'bad percent-encoding in the socket path'],
    ['unix:///tmp/r.sock?db=-1', 'database must be a number'],
    ['unix:///tmp/r.sock?timeout=3', 'unknown parameter "timeout" (known for a Unix socket: db)'],
    ['unix://u:%zz@/tmp/r.sock', 'bad percent-encoding in the credentials'],
  ];
  for (const [url, why] of bad) {
    it(`refuses ${url}`, () => {
      assert.throws(
        () => parseRedisUrl(url),
        (err: unknown) => err instanceof ConfigError && err.reason.startsWith(why) && err.message.startsWith(`invalid redis url "${redact(url)}": `),
      );
    });
  }

  it('never shows the password', () => {
    for (const url of ['redis://u:s3cret@h:0', 'unix://u:s3cret@/tmp/r.sock?db=x', 'rediss://:s3cret@h?x=1']) {
      assert.throws(
        () => parseRedisUrl(url),
        (err: unknown) => err instanceof Error && !err.message.includes('s3cret'),
      );
    }
  });
});
