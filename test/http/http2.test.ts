// HTTP/2 on the gateway's port, beside HTTP/1.1: the same
// chain and answers, several watches and requests on one connection, the
// identity rules, and the connection-level defences kube-apiserver has.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { promisify } from 'node:util';
import { startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: any;
}

function h2request(s: ClientHttp2Session, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const st = s.request({ ':method': method, ':path': path, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers });
    let h: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    st.on('response', (r) => {
      h = r;
    });
    st.on('data', (c: Buffer) => chunks.push(c));
    st.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status: Number(h[':status']), headers: h, text, json });
    });
    st.on('error', reject);
    st.end(payload);
  });
}

/** Watch events on one stream of `s`, until stopped. */
function h2watch(s: ClientHttp2Session, path: string) {
  const events: { type: string; object: any }[] = [];
  const st = s.request({ ':method': 'GET', ':path': path });
  let buf = '';
  st.setEncoding('utf8');
  st.on('data', (d: string) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim()) events.push(JSON.parse(line));
    }
  });
  return {
    events,
    async next(type: string, ms = 10_000) {
      const deadline = Date.now() + ms; // a bound, not a timing assertion
      for (;;) {
        const i = events.findIndex((e) => e.type === type);
        if (i >= 0) return events.splice(i, 1)[0]!;
        if (Date.now() > deadline) throw new Error(`no ${type} event on ${path}; got ${JSON.stringify(events)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop: () => st.close(),
  };
}

function tlsOf(g: Gatehouse): { ca: string; cert: string; key: string } {
  const pki = join(g.dataDir, 'pki');
  return {
    ca: readFileSync(join(pki, 'ca.crt'), 'utf8'),
    cert: readFileSync(join(pki, 'admin.crt'), 'utf8'),
    key: readFileSync(join(pki, 'admin.key'), 'utf8'),
  };
}

const untilGoaway = (s: ClientHttp2Session) =>
  new Promise<void>((resolve) => {
    if (s.closed) resolve();
    s.once('goaway', () => resolve());
    s.once('close', () => resolve());
  });

describe('HTTP/2', { timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let tls: { ca: string; cert: string; key: string };
  const sessions: ClientHttp2Session[] = [];
  /** A connection whose server SETTINGS have arrived. */
  const open = (withCert = true, to: Gatehouse = gh): Promise<ClientHttp2Session> =>
    new Promise((resolve, reject) => {
      const t = tlsOf(to);
      const s = connect(to.url, { ca: t.ca, ...(withCert ? { cert: t.cert, key: t.key } : {}), servername: 'localhost' });
      sessions.push(s);
      s.once('remoteSettings', () => resolve(s));
      s.once('error', reject);
    });

  before(async () => {
    const dir = tempDir('h2');
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, 'h2-secret-token,h2-user,u-1,"devs"\n');
    gh = await startGatehouse({ flags: [`--token-auth-file=${tokens}`, '--http2-max-streams-per-connection=64'] });
    tls = tlsOf(gh);
  });
  after(async () => {
    for (const s of sessions) s.destroy();
    await stopAll();
  });

  it('is chosen by ALPN and answers through the same chain, with the stream limit of the flag', async () => {
    const s = await open();
    assert.equal(s.alpnProtocol, 'h2');
    assert.equal(s.remoteSettings.maxConcurrentStreams, 64);
    const created = await h2request(s, 'POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'h2-a' },
      data: { a: '1' },
    });
    assert.equal(created.status, 201, created.text);
    assert.match(String(created.headers['audit-id']), /^[0-9a-f-]{36}$/);
    const got = await h2request(s, 'GET', '/api/v1/namespaces/default/configmaps/h2-a');
    assert.equal(got.status, 200);
    assert.deepEqual(got.json.data, { a: '1' });
    const table = await h2request(s, 'GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(table.json.kind, 'Table');
    const missing = await h2request(s, 'GET', '/api/v1/namespaces/default/configmaps/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.reason, 'NotFound');
    const tooBig = await h2request(s, 'POST', '/api/v1/namespaces/default/configmaps', `{"x":"${'a'.repeat(4 * 1024 * 1024)}"}`);
    assert.equal(tooBig.status, 413, tooBig.text.slice(0, 200));
    assert.equal(s.closed, false, 'the connection is still usable');
    assert.equal((await h2request(s, 'GET', '/livez')).status, 200);
  });

  it('carries several watches and requests on one connection', async () => {
    const s = await open();
    const list = await h2request(s, 'GET', '/api/v1/namespaces/default/configmaps');
    const rv = list.json.metadata.resourceVersion;
    const watches = ['default', 'kube-system', 'kube-public'].map((ns) => ({
      ns,
      w: h2watch(s, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${rv}`),
    }));
    const secrets = h2watch(s, `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${rv}`);
    try {
      await Promise.all(
        watches.map(({ ns }) =>
          h2request(s, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${ns}` } }),
        ),
      );
      await h2request(s, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'w-secret' } });
      for (const { ns, w } of watches) {
        const ev = await w.next('ADDED');
        assert.equal(ev.object.metadata.name, `w-${ns}`);
        assert.equal(ev.object.metadata.namespace, ns);
      }
      assert.equal((await secrets.next('ADDED')).object.metadata.name, 'w-secret');
      // Requests still flow beside the open watches.
      const many = await Promise.all(Array.from({ length: 40 }, () => h2request(s, 'GET', '/api/v1/namespaces/default/configmaps/h2-a')));
      assert.ok(many.every((r) => r.status === 200));
    } finally {
      for (const { w } of watches) w.stop();
      secrets.stop();
    }
  });

  it('authenticates tokens and impersonation, and ignores identity headers from a client that is no proxy', async () => {
    const s = await open(false);
    const who = await h2request(
      s,
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { authorization: 'Bearer h2-secret-token', 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' },
    );
    assert.equal(who.status, 201, who.text);
    assert.equal(who.json.status.userInfo.username, 'h2-user');
    assert.deepEqual(who.json.status.userInfo.groups, ['devs', 'system:authenticated']);
    const admin = await open();
    const as = await h2request(
      admin,
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { 'impersonate-user': 'jane', 'impersonate-group': 'qa' },
    );
    assert.equal(as.status, 201, as.text);
    assert.equal(as.json.status.userInfo.username, 'jane');
    assert.ok(as.json.status.userInfo.groups.includes('qa'));
  });

  it('tells a connection to go away after a failed or anonymous request (CVE-2023-44487)', async () => {
    const failed = await open(false);
    const gone = untilGoaway(failed);
    const r = await h2request(failed, 'GET', '/api/v1/namespaces/default/configmaps', undefined, { authorization: 'Bearer wrong' });
    assert.equal(r.status, 401);
    await gone;
    const anon = await open(false);
    const gone2 = untilGoaway(anon);
    const a = await h2request(anon, 'GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(a.status, 403);
    await gone2;
    // An authenticated client keeps its connection.
    const ok = await open();
    let away = false;
    ok.once('goaway', () => {
      away = true;
    });
    for (let i = 0; i < 5; i++) assert.equal((await h2request(ok, 'GET', '/livez')).status, 200);
    assert.equal(away, false);
  });

  it('with --goaway-chance, sends GOAWAY after some requests of a long-lived client', async () => {
    // 0.02 per request: 1,000 requests all without one has odds of 0.98^1000 (about 2e-9).
    const spread = await startGatehouse({ flags: ['--goaway-chance=0.02'] });
    let s = await open(true, spread);
    let gone = false;
    s.on('goaway', () => {
      gone = true;
    });
    let goaways = 0;
    for (let i = 0; i < 1000 && goaways === 0; i++) {
      let status: number;
      try {
        status = (await h2request(s, 'GET', '/version')).status;
      } catch (err) {
        // A request sent before the GOAWAY reached the client is refused (REFUSED_STREAM: safe to retry
        // elsewhere, as clients do); the GOAWAY frame came first on the connection.
        if (!gone || (err as { code?: string }).code !== 'ERR_HTTP2_STREAM_ERROR') throw err;
        status = 0;
      }
      if (status !== 0) assert.equal(status, 200, 'every request the server took is answered whole: GOAWAY is graceful');
      if (gone) {
        goaways++;
        s = await open(true, spread);
        assert.equal((await h2request(s, 'GET', '/version')).status, 200);
      }
    }
    assert.ok(goaways > 0, 'a GOAWAY came within 1,000 requests');
  });

  it('serves curl --http2', async () => {
    const dir = tempDir('h2-curl');
    const f = (n: string, v: string) => {
      const p = join(dir, n);
      writeFileSync(p, v);
      return p;
    };
    const { stdout } = await promisify(execFile)('curl', [
      '-s',
      '--http2',
      '--cacert',
      f('ca', tls.ca),
      '--cert',
      f('crt', tls.cert),
      '--key',
      f('key', tls.key),
      '-w',
      '\n%{http_version} %{http_code}',
      `https://localhost:${gh.port}/api/v1/namespaces/default/configmaps/h2-a`,
      '--resolve',
      `localhost:${gh.port}:127.0.0.1`,
    ]);
    const [body, last] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)];
    assert.equal(last, '2 200');
    assert.equal(JSON.parse(body).metadata.name, 'h2-a');
  });
});
