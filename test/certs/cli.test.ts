import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { runCertsCommand } from '../../certs/cli.js';

const root = mkdtempSync(join(tmpdir(), 'gatehouse-certs-cli-'));
after(() => rmSync(root, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCertsCommand(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('gatehouse certs', () => {
  it('init creates the dev PKI with the extra SANs and port', async () => {
    const dir = join(root, 'init');
    const r = await run('init', '--dir', dir, '--port=7443', '--san', 'gh.example,192.0.2.1', '--san', 'other.example');
    assert.equal(r.code, 0, r.err.join('\n'));
    const x = new X509Certificate(readFileSync(join(dir, 'pki', 'apiserver.crt')));
    assert.ok(x.checkHost('gh.example') && x.checkHost('other.example') && x.checkIP('192.0.2.1'));
    assert.match(readFileSync(join(dir, 'admin.kubeconfig'), 'utf8'), /server: https:\/\/127\.0\.0\.1:7443/);
  });

  it('client issues a certificate from the CA and a kubeconfig for it', async () => {
    const dir = join(root, 'client');
    assert.equal((await run('init', '--dir', dir, '--port', '9443')).code, 0);
    const r = await run('client', '--dir', dir, '--user', 'system:node:n1', '--group', 'system:nodes', '--group', 'a,b');
    assert.equal(r.code, 0, r.err.join('\n'));
    const path = join(dir, 'system_node_n1.kubeconfig');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const kc = parse(readFileSync(path, 'utf8')) as { clusters: { cluster: { server: string } }[]; users: { name: string; user: Record<string, string> }[] };
    assert.equal(kc.clusters[0]!.cluster.server, 'https://127.0.0.1:9443');
    assert.equal(kc.users[0]!.name, 'system:node:n1');
    const x = new X509Certificate(Buffer.from(kc.users[0]!.user['client-certificate-data']!, 'base64'));
    assert.equal(x.subject, 'O=system:nodes\nO=a\\,b\nCN=system:node:n1'); // Node escapes the comma
    assert.ok(x.checkIssued(new X509Certificate(readFileSync(join(dir, 'pki', 'ca.crt')))));
  });

  it('client writes to --out', async () => {
    const dir = join(root, 'out');
    await run('init', '--dir', dir);
    const out = join(root, 'elsewhere', 'jane.yaml');
    assert.equal((await run('client', '--dir', dir, '--user=jane', `--out=${out}`)).code, 0);
    assert.ok(existsSync(out));
  });

  it('help prints the usage', async () => {
    const r = await run('help');
    assert.equal(r.code, 0);
    assert.match(r.out.join('\n'), /^Usage: gatehouse certs <command>/);
  });

  const bad: [string[], string][] = [
    [[], 'gatehouse certs: missing command: run "gatehouse certs help"'],
    [['frob'], 'gatehouse certs: unknown command "frob": run "gatehouse certs help"'],
    [['init'], 'gatehouse certs: missing required flag: --dir'],
    [['init', '--dir'], 'gatehouse certs: flag needs an argument: --dir'],
    [['init', '--dir', 'x', '--colour', 'red'], 'gatehouse certs: unknown flag: --colour'],
    [['init', '--dir', 'x', '--port', '70000'], 'gatehouse certs: invalid value "70000" for --port: must be an integer between 1 and 65535'],
    [['init', 'stray'], 'gatehouse certs: unexpected argument "stray"'],
    [['client', '--dir', 'x'], 'gatehouse certs: missing required flag: --user'],
  ];
  for (const [argv, message] of bad) {
    it(`rejects ${JSON.stringify(argv)} with one line`, async () => {
      const r = await run(...argv);
      assert.equal(r.code, 1);
      assert.deepEqual(r.err, [message]);
    });
  }

  it('client without a CA names the init command', async () => {
    const dir = join(root, 'empty');
    const r = await run('client', '--dir', dir, '--user', 'x');
    assert.equal(r.code, 1);
    assert.equal(r.err.length, 1);
    assert.match(r.err[0]!, /^gatehouse certs: no CA in ".*": run "gatehouse certs init --dir .*" first$/);
  });
});
