// rediss:// with a CA and user/password in the URL, against a private
// redis-server that speaks only TLS (certificates from certs/pki.ts in a temp
// dir). Skips, with the reason printed, only when redis-server has no TLS.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCa, generateServingCert } from '../../certs/pki.js';
import { RedisStore } from '../../backends/core/store/redis.js';
import { StoreError } from '../../backends/core/store/types.js';
import { Collector, pod, rv } from '../store/helpers.js';
import { uniquePrefix } from '../store/fixtures/redis-env.js';
import { freePort } from '../e2e/helpers.js';
import { RedisServer, redisServerHasTls, redisServerSkipReason } from './redis-server.js';

let skip = await redisServerSkipReason();
if (!skip && !(await redisServerHasTls())) {
  skip = 'this redis-server was built without TLS support (it refuses --tls-port)';
  console.log(`# skipping: ${skip}`);
}

describe('redis store over TLS (rediss://)', { skip }, () => {
  let dir = '';
  let server: RedisServer | undefined;
  let port = 0;
  let caFile = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gh-redis-tls-'));
    const ca = generateCa('gh-redis-test-ca');
    const serving = generateServingCert(ca, { commonName: 'redis' });
    caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, ca.certPem);
    writeFileSync(join(dir, 'redis.crt'), serving.certPem);
    writeFileSync(join(dir, 'redis.key'), serving.keyPem, { mode: 0o600 });
    port = await freePort();
    server = await RedisServer.start(
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--tls-cert-file',
        join(dir, 'redis.crt'),
        '--tls-key-file',
        join(dir, 'redis.key'),
        '--tls-ca-cert-file',
        caFile,
        '--tls-auth-clients',
        'no',
        '--user',
        'gh',
        'on',
        '>s3cret:pw',
        '~*',
        '&*',
        '+@all',
      ],
      port,
      { ca: ca.certPem },
    );
  });

  after(async () => {
    await server?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes, reads and watches through rediss:// with a CA and credentials', async () => {
    const url = `rediss://gh:${encodeURIComponent('s3cret:pw')}@127.0.0.1:${port}?ca=${encodeURIComponent(caFile)}`;
    const store = await RedisStore.open({ url, prefix: uniquePrefix('tls'), historyWindowMs: 60_000 });
    try {
      const w = new Collector();
      const watcher = store.watch('core/pods/', await store.currentRev(), w);
      const x = await store.create('core/pods/a/x', pod('a', 'x'));
      assert.equal(rv(await store.get('core/pods/a/x')), rv(x));
      assert.equal((await w.waitFor(1))[0]!.key, 'core/pods/a/x');
      watcher.stop();
      await store.check();
    } finally {
      await store.close();
    }
  });

  it('refuses a wrong password and a server certificate it cannot verify', async () => {
    const bad = async (url: string, what: RegExp): Promise<void> => {
      await assert.rejects(RedisStore.open({ url, prefix: uniquePrefix('tls'), historyWindowMs: 60_000 }), (err: unknown) => {
        assert.ok(err instanceof StoreError && err.code === 'unreachable', String(err));
        assert.match(err.message, what);
        assert.doesNotMatch(err.message, /s3cret|wrong-pw/, 'credentials stay out of messages');
        return true;
      });
    };
    await bad(`rediss://gh:wrong-pw@127.0.0.1:${port}?ca=${encodeURIComponent(caFile)}`, /WRONGPASS|invalid username-password/i);
    await bad(`rediss://gh:${encodeURIComponent('s3cret:pw')}@127.0.0.1:${port}`, /certificate|self.signed|verify/i);
    await bad(`redis://gh:${encodeURIComponent('s3cret:pw')}@127.0.0.1:${port}`, /./);
  });
});
