// The command line as a user meets it: bad starts end with one clear line and
// exit code 1 (never a stack trace), help exits 0, and `npm start` prints how
// to connect with kubectl.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Kubectl, findKubectl, freePort, runGatehouse, spawnTracked, stopAll, tempDir } from './helpers.js';

after(stopAll);

function assertOneLineFailure(r: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  assert.equal(r.code, 1, `exit code; stderr: ${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got:\n${r.stderr}`);
  assert.match(lines[0]!, /^gatehouse: /);
  assert.match(lines[0]!, message);
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  assert.equal(r.stdout, '');
}

describe('gatehouse serve refuses a bad start with one line and exit code 1', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown flag', ['--no-such-flag=1'], /unknown flag: --no-such-flag/],
    ['a port that is not a number', ['--secure-port=abc'], /invalid value "abc" for --secure-port/],
    ['a negative watch history', ['--watch-history=-1s'], /invalid value "-1s" for --watch-history/],
    ['an unknown authorization mode', ['--authorization-mode=Bogus'], /invalid value "Bogus" for --authorization-mode: unknown mode/],
    ['--tls-cert-file without --tls-private-key-file', ['--tls-cert-file=/nonexistent/serving.crt'], /--tls-private-key-file/],
    ['several problems at once, all named', ['--secure-port=abc', '--watch-history=soon'], /--secure-port.*--watch-history|--watch-history.*--secure-port/],
  ];
  for (const [what, flags, message] of cases) {
    it(`refuses ${what}`, async () => {
      const dataDir = tempDir('cli');
      assertOneLineFailure(await runGatehouse(['serve', `--data-dir=${dataDir}`, ...flags]), message);
    });
  }

  it('refuses a port that is already in use', async () => {
    const blocker = createServer();
    blocker.listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    try {
      const { port } = blocker.address() as { port: number };
      const r = await runGatehouse(['serve', `--secure-port=${port}`, `--data-dir=${tempDir('cli')}`]);
      assertOneLineFailure(r, /cannot start: .*EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  it('refuses a serving certificate file that does not exist', async () => {
    const dir = tempDir('cli');
    const r = await runGatehouse([
      'serve',
      `--data-dir=${dir}`,
      `--tls-cert-file=${join(dir, 'missing.crt')}`,
      `--tls-private-key-file=${join(dir, 'missing.key')}`,
    ]);
    assertOneLineFailure(r, /missing\.crt/);
  });

  it('refuses a serving certificate that is not PEM', async () => {
    const dir = tempDir('cli');
    writeFileSync(join(dir, 'bad.crt'), 'not a certificate\n');
    writeFileSync(join(dir, 'bad.key'), 'not a key\n');
    const r = await runGatehouse([
      'serve',
      `--secure-port=${await freePort()}`,
      `--data-dir=${dir}`,
      `--tls-cert-file=${join(dir, 'bad.crt')}`,
      `--tls-private-key-file=${join(dir, 'bad.key')}`,
    ]);
    assertOneLineFailure(r, /cannot start: --tls-cert-file ".*bad\.crt": no PEM certificate found/);
  });
});

describe('gatehouse commands', () => {
  it('gatehouse help prints the commands and exits 0', async () => {
    const r = await runGatehouse(['help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: gatehouse <command>/);
    assert.match(r.stdout, /serve/);
    assert.equal(r.stderr, '');
  });

  it('gatehouse serve --help lists the flags and exits 0', async () => {
    const r = await runGatehouse(['serve', '--help']);
    assert.equal(r.code, 0, r.stderr);
    for (const f of ['--secure-port', '--data-dir', '--storage-backend', '--watch-history', '--shutdown-delay-duration', '--authorization-mode']) {
      assert.ok(r.stdout.includes(f), `help mentions ${f}`);
    }
  });

  it('an unknown command exits 1 with one line', async () => {
    assertOneLineFailure(await runGatehouse(['frobnicate']), /unknown command "frobnicate"/);
  });
});

describe('the backend processes refuse the flags they would not honour, with one line and exit code 1', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['core-backend', ['--token-auth-file=/nonexistent/tokens.csv'], /--token-auth-file is not read by core-backend/],
    ['sample-backend', ['--enable-bootstrap-token-auth'], /--enable-bootstrap-token-auth is not read by sample-backend/],
    ['sample-backend', ['--runtime-config', 'api/all=true'], /--runtime-config is not read by sample-backend/],
    // csrsigning runs in the core backend only.
    [
      'sample-backend',
      ['--cluster-signing-cert-file=ca.crt', '--cluster-signing-key-file=ca.key'],
      /--cluster-signing-cert-file is not read by sample-backend/,
    ],
    ['core-backend', ['--enable-priority-and-fairness=true'], /--enable-priority-and-fairness: core-backend keeps the plain in-flight limits/],
    ['sample-backend', ['--authorization-mode=RBAC'], /--authorization-mode: sample-backend authorizes through the gateway's SubjectAccessReview/],
  ];
  for (const [kind, flags, message] of cases) {
    it(`gatehouse ${kind} ${flags.join(' ')}`, async () => {
      assertOneLineFailure(await runGatehouse([kind, `--data-dir=${tempDir('cli')}`, ...flags]), message);
    });
  }
});

describe('npm start', () => {
  it('prints how to connect with kubectl, and the printed command works', async () => {
    const dataDir = tempDir('npm-start');
    const port = await freePort();
    // npm runs sh, which runs node: a process group of its own, killed as a whole.
    const proc = spawnTracked('npm', ['start', '--silent', '--', `--secure-port=${port}`, `--data-dir=${dataDir}`], { detached: true });
    const kubeconfig = join(dataDir, 'admin.kubeconfig');
    await proc.waitFor('the connect instructions', (p) => p.stdout.includes('export KUBECONFIG') || !p.running, 60_000);
    assert.ok(proc.running, `npm start exited: ${proc.stderr}`);
    assert.match(proc.stdout, new RegExp(`serving on https://127\\.0\\.0\\.1:${port}`));
    assert.ok(proc.stdout.includes(`kubectl --kubeconfig ${kubeconfig}`), proc.stdout);

    const kubectl = findKubectl();
    if (kubectl) {
      const printed = /kubectl --kubeconfig (\S+) (get namespaces)/.exec(proc.stdout);
      assert.ok(printed);
      const k = new Kubectl(kubectl, printed[1]!);
      // The server may still be running its post-start hooks; ask until the namespaces are there (bounded).
      let out = '';
      for (let i = 0; i < 100 && !/kube-system/.test(out); i++) {
        const r = await k.run(['get', 'namespaces']);
        out = r.stdout;
        if (!/kube-system/.test(out)) await new Promise((res) => setTimeout(res, 200));
      }
      assert.match(out, /^default\s+Active/m);
    }
    proc.kill('SIGTERM');
    const exit = await proc.waitExit(30_000);
    assert.ok(exit.code === 0 || exit.signal === 'SIGTERM', `npm start ended with ${JSON.stringify(exit)}: ${proc.stderr}`);
  });
});
