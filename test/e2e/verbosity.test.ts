// -v/--v as kube-apiserver's klog levels for requests: from 3 one line per
// request in kube's httplog form (verb as the request metrics name it, URI,
// latency, userAgent, audit-ID, srcIP, the user, resp), from 6 the headers of
// the request and of its answer too; below 3 none. A 10 MiB object logs a
// bounded line with none of its content; a token-like query value is redacted.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findKubectl, Kubectl, startGatehouse, stopAll, tempDir } from './helpers.js';

after(stopAll);
const binary = findKubectl();
const HTTP_LINE =
  /"HTTP" verb="([A-Z]+)" URI="([^"]*)" latency="([0-9.]+(?:ns|µs|ms|s))" userAgent="([^"]*)" audit-ID="([^"]*)" srcIP="([^"]+)" user="([^"]*)" resp=(\d+)$/;

function httpLines(stderr: string): RegExpExecArray[] {
  return stderr
    .split('\n')
    .map((l) => HTTP_LINE.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
}

describe('-v as kube-apiserver', { timeout: 180_000 }, () => {
  it('-v=3: one httplog line per request, with what kubectl -v shows of the same request', { skip: binary ? false : 'kubectl is not installed' }, async () => {
    const gh = await startGatehouse({ flags: ['-v=3'] });
    const k = new Kubectl(binary!, gh.kubeconfig);
    const r = await k.run(['get', 'namespaces', '-v=6']);
    assert.equal(r.code, 0, r.stderr);
    // kubectl -v=6 prints the request it made: `"Response" verb="GET" url="https://…/api/v1/namespaces?limit=500" status="200 OK"`.
    const asked = /url="https:\/\/[^/]+(\/api\/v1\/namespaces\?limit=500)"/.exec(r.stderr);
    assert.ok(asked, r.stderr);
    await gh.proc.waitFor('the request line', (p) => httpLines(p.stderr).some((m) => m[2] === asked[1]), 10_000);
    const line = httpLines(gh.proc.stderr).find((m) => m[2] === asked[1])!;
    assert.equal(line[1], 'LIST');
    assert.match(line[4]!, /^kubectl/);
    assert.match(line[5]!, /^[0-9a-f-]{36}$/);
    assert.match(line[6]!, /^127\.0\.0\.1:\d+$/);
    assert.equal(line[7], 'admin');
    assert.equal(line[8], '200');
    const missing = await gh.admin.request('GET', '/api/v1/namespaces/default/configmaps/nope');
    assert.equal(missing.status, 404);
    await gh.proc.waitFor(
      'the 404 line',
      (p) => httpLines(p.stderr).some((m) => m[2] === '/api/v1/namespaces/default/configmaps/nope' && m[1] === 'GET' && m[8] === '404'),
      10_000,
    );
    assert.doesNotMatch(gh.proc.stderr, /"HTTP details"/, 'headers only from -v=6');
    await gh.stop();
  });

  it('below 3 no request is logged', async () => {
    const gh = await startGatehouse({ flags: ['--v=2'] });
    assert.equal((await gh.admin.request('GET', '/api/v1/namespaces')).status, 200);
    await gh.stop();
    assert.deepEqual(httpLines(gh.proc.stderr), []);
  });

  it('-v=6: headers of the request and of the answer, bounded for a 10 MiB object, credentials and token values never', async () => {
    const dir = tempDir('verbosity');
    const tokens = join(dir, 'tokens.csv');
    const TOKEN = 'tok-Verbose-5c1d7e9a3b';
    writeFileSync(tokens, `${TOKEN},operator,u-1,"system:masters"\n`);
    const gh = await startGatehouse({ flags: ['-v=6', `--token-auth-file=${tokens}`, '--max-request-body-bytes=16777216'] });
    const marker = 'BODY-MARKER-';
    const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { a: `${marker}${'x'.repeat(10 * 1024 * 1024)}` } };
    const r = await gh.anonymous.request('POST', '/api/v1/namespaces/default/configmaps', big, {
      authorization: `Bearer ${TOKEN}`,
      'x-client-note': 'n'.repeat(4000),
    });
    assert.ok(r.status === 201 || r.status === 413 || r.status === 422, `${r.status} ${r.text.slice(0, 200)}`);
    const q = await gh.anonymous.request('GET', `/api/v1/namespaces?access_token=${TOKEN}&limit=1`, undefined, { authorization: `Bearer ${TOKEN}` });
    assert.equal(q.status, 200);
    const audit = String(r.headers['audit-id']);
    await gh.proc.waitFor(
      'the details line',
      (p) => p.stderr.includes(`"HTTP details" audit-ID="${audit}"`) && p.stderr.includes('access_token=[redacted]'),
      10_000,
    );
    await gh.stop();
    const log = gh.proc.stderr;
    const details = log.split('\n').find((l) => l.includes(`"HTTP details" audit-ID="${audit}"`))!;
    assert.match(details, /requestHeaders=map\[.*content-type:\[application\/json\]/);
    assert.match(details, /responseHeaders=map\[.*audit-id:\[/);
    assert.match(details, /x-client-note:\[n+…\(\d+ more\)\]/, 'a long header value is cut');
    for (const line of log.split('\n')) assert.ok(line.length < 10_000, `a line of ${line.length} characters`);
    assert.ok(!log.includes(marker), "the object's content is never logged");
    assert.ok(!log.includes(TOKEN), 'the token is never logged');
    const post = httpLines(log).find((m) => m[5] === audit)!;
    assert.equal(post[1], 'POST');
    assert.equal(post[7], 'operator');
  });
});
