// No credential or Secret value in the log at the highest verbosity, nor in
// an error sent to a client.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';

const TOKEN = 'tok-Secret-7f3a9c1e5b';
const WRONG = 'tok-Wrong-2d8e4f6a0c';
const SECRET_VALUE = 'hunter2-Value-91b7';
const PASSWORD = 'pw-Basic-c4e2a8';

describe('secrets stay out of logs and error messages', () => {
  let gh: Gatehouse;
  const answers: string[] = [];
  before(async () => {
    const dir = tempDir('logsecrets');
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${TOKEN},logger,u-9,"system:masters"\n`);
    gh = await startGatehouse({ flags: [`--token-auth-file=${tokens}`, '--v=10'] });
  });
  after(stopAll);

  it('never logs or echoes a token, a password or a Secret value', async () => {
    const asToken = (t: string) => ({ authorization: `Bearer ${t}` });
    const record = (r: { status: number; text: string; headers: Record<string, unknown> }) => {
      answers.push(`${r.status} ${JSON.stringify(r.headers)} ${r.text}`);
      return r;
    };
    // A good token, a wrong one, Basic credentials, and a token as a query parameter.
    record(await gh.anonymous.request('GET', '/api/v1/namespaces', undefined, asToken(TOKEN)));
    record(await gh.anonymous.request('GET', '/api/v1/namespaces', undefined, asToken(WRONG)));
    record(
      await gh.anonymous.request('GET', '/api/v1/namespaces', undefined, { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` }),
    );
    record(await gh.anonymous.request('GET', `/api/v1/namespaces?access_token=${WRONG}`));
    // A Secret written, read back, refused, and patched badly.
    const data = { password: Buffer.from(SECRET_VALUE).toString('base64') };
    record(await gh.admin.request('POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data }));
    record(
      await gh.admin.request('POST', '/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's2' },
        stringData: { password: SECRET_VALUE },
        data: { bad: 'not base64!' },
      }),
    );
    record(
      await gh.admin.request('POST', '/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's1' },
        stringData: { password: SECRET_VALUE },
      }),
    );
    record(
      await gh.admin.request('PATCH', '/api/v1/namespaces/default/secrets/s1', `{"stringData":{"password":"${SECRET_VALUE}"`, {
        'content-type': 'application/merge-patch+json',
      }),
    );
    record(
      await gh.admin.request('PUT', '/api/v1/namespaces/default/secrets/s1', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's1', resourceVersion: '1' },
        stringData: { password: SECRET_VALUE },
      }),
    );
    // A token sent to TokenReview that does not authenticate.
    record(
      await gh.admin.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: WRONG },
      }),
    );
    // The child's log reaches this process through a pipe, a moment after the answers.
    await gh.proc.waitFor('the token review log line', (p) => /token review by "admin"/.test(p.stderr), 10_000);
    const log = `${gh.proc.stdout}\n${gh.proc.stderr}`;
    if (process.env.SHOW_LOG) console.log(log);
    // The failures are logged (so the check below reads lines about these very requests).
    assert.match(log, /authentication failed for GET \/api\/v1\/namespaces/);
    assert.match(log, /token review by "admin": not authenticated/);
    for (const secret of [TOKEN, WRONG, SECRET_VALUE, PASSWORD, Buffer.from(SECRET_VALUE).toString('base64')]) {
      assert.ok(!log.includes(secret), `the log holds ${secret}`);
      // The Secret's own GET answers are where its value belongs; every error and other answer stays clean.
      for (const a of answers.filter((x) => !x.startsWith('200') && !x.startsWith('201')))
        assert.ok(!a.includes(secret), `an error answer holds ${secret}: ${a.slice(0, 300)}`);
    }
  });
});
