import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BearerToken } from '../../gateway/authn/token.js';
import { ConfigError } from '../../lib/config/error.js';
import { parseCsv, StaticTokenAuthenticator } from '../../gateway/authn/tokenfile.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { hasKubectl, kubectl, whoAmI, withToken } from './tokenkit.js';

const FILE =
  ['alice-token,alice,uid-alice,"dev,ops"', '', 'bob-token,bob,uid-bob', 'carol-token,carol,,team-a,team-b', '"quoted,token",dave,uid-dave,"say ""hi"""'].join(
    '\r\n',
  ) + '\n';

describe('static token file parsing', () => {
  it('reads quoted columns, escaped quotes, CRLF and blank lines as Go encoding/csv does', () => {
    const rows = parseCsv(FILE, 'f.csv');
    assert.deepEqual(
      rows.map((r) => r.line),
      [1, 3, 4, 5],
    );
    assert.deepEqual(rows[0]!.fields, ['alice-token', 'alice', 'uid-alice', 'dev,ops']);
    assert.deepEqual(rows[3]!.fields, ['quoted,token', 'dave', 'uid-dave', 'say "hi"']);
  });

  it('splits a quoted group column and also takes further columns as groups', async () => {
    const a = new StaticTokenAuthenticator(FILE, 'f.csv');
    assert.deepEqual((await a.authenticateToken(new BearerToken('alice-token')))!.user, { username: 'alice', uid: 'uid-alice', groups: ['dev', 'ops'] });
    assert.deepEqual((await a.authenticateToken(new BearerToken('carol-token')))!.user, { username: 'carol', groups: ['team-a', 'team-b'] });
    assert.deepEqual((await a.authenticateToken(new BearerToken('bob-token')))!.user.groups, []);
    assert.equal((await a.authenticateToken(new BearerToken('quoted,token')))!.user.username, 'dave');
  });

  it('answers not mine for an unknown token and for a prefix of a known one', async () => {
    const a = new StaticTokenAuthenticator(FILE, 'f.csv');
    assert.equal(await a.authenticateToken(new BearerToken('alice-toke')), null);
    assert.equal(await a.authenticateToken(new BearerToken('nobody')), null);
  });

  it('names the line of a row with too few columns', () => {
    assert.throws(
      () => new StaticTokenAuthenticator('a,b,c\n\nonly-two,cols\n', 'f.csv'),
      (e: unknown) => e instanceof ConfigError && /f\.csv: line 3: must have at least 3 columns .*found 2/.test(e.message),
    );
  });

  it('names the line of a bare or unterminated quote', () => {
    assert.throws(() => new StaticTokenAuthenticator('a,b,c\nx,y"z,w\n', 'f.csv'), /line 2: bare " in non-quoted-field/);
    assert.throws(() => new StaticTokenAuthenticator('a,b,c\n"open,b,c\n', 'f.csv'), /line 2: extraneous or missing "/);
  });

  it('skips an empty token with a warning and lets a duplicate token take the later line', async () => {
    const warnings: string[] = [];
    const a = new StaticTokenAuthenticator(',nobody,1\nt,first,1\nt,second,2\n', 'f.csv', (m) => warnings.push(m));
    assert.equal(a.size, 1);
    assert.equal((await a.authenticateToken(new BearerToken('t')))!.user.username, 'second');
    assert.equal(warnings.length, 2);
  });
});

describe('static tokens over HTTPS', () => {
  let s: TestServer;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-tokenfile-'));
    await writeFile(join(dir, 'tokens.csv'), FILE);
    s = await startTestServer({ flags: ['--token-auth-file', join(dir, 'tokens.csv'), '--authorization-mode=AlwaysAllow'] });
  });
  after(async () => {
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('authenticates a static token sent as Authorization: Bearer', async () => {
    const r = await withToken(s, 'alice-token');
    assert.equal(r.status, 200, r.text);
    const who = await whoAmI(s, 'alice-token');
    if (who.username !== undefined) {
      assert.equal(who.username, 'alice');
      assert.deepEqual(who.groups, ['dev', 'ops', 'system:authenticated']);
      assert.equal(who.uid, 'uid-alice');
    }
  });

  it('answers 401 with a Status for a token that is in no file', async () => {
    const r = await withToken(s, 'mallory-token');
    assert.equal(r.status, 401);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'Unauthorized');
    assert.doesNotMatch(r.text, /mallory/);
  });

  it('works for kubectl --token', { skip: hasKubectl ? false : 'kubectl is not installed' }, async () => {
    const ok = await kubectl(s, 'bob-token', ['get', 'namespaces', '-o', 'name']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /namespace\/default/);
    const bad = await kubectl(s, 'wrong-token', ['get', 'namespaces']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /Unauthorized|must be logged in/);
  });
});

describe('static tokens under AlwaysDeny', () => {
  it('a 403 names the token user, which proves the authentication', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tokenfile-'));
    await writeFile(join(dir, 'tokens.csv'), FILE);
    const s = await startTestServer({ flags: ['--token-auth-file', join(dir, 'tokens.csv')] });
    try {
      const r = await withToken(s, 'carol-token');
      assert.equal(r.status, 403);
      assert.match(r.json.message, /User "carol" cannot list resource "namespaces"/);
    } finally {
      await s.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a bad token file', () => {
  it('fails the start with one line naming the flag, the file and the line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tokenfile-'));
    const path = join(dir, 'tokens.csv');
    await writeFile(path, 'good,user,1\n# a comment is a record too\n');
    try {
      await assert.rejects(startTestServer({ dataDir: dir, flags: ['--token-auth-file', path] }), (e: Error) => {
        assert.equal(e.message, `invalid value "${path}" for --token-auth-file: line 2: must have at least 3 columns (token, user name, uid), found 1`);
        return true;
      });
      await assert.rejects(startTestServer({ dataDir: dir, flags: ['--token-auth-file', join(dir, 'missing.csv')] }), /--token-auth-file: no such file/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
