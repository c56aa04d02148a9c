import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { after, describe, it } from 'node:test';
import { ensureDevPki } from '../../certs/devpki.js';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const root = mkdtempSync(join(tmpdir(), 'gatehouse-kubectl-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('admin.kubeconfig with the real kubectl', { skip: hasKubectl ? false : 'kubectl is not installed' }, () => {
  it('kubectl trusts the serving cert and presents the admin client cert', async () => {
    const seen: { CN?: string; O?: string }[] = [];
    // Port 0 first to learn a free port, then the PKI is made for it, as `gatehouse serve` would.
    const paths0 = await ensureDevPki(join(root, 'data'), { host: '127.0.0.1', port: 1 });
    const server = createServer(
      {
        cert: readFileSync(paths0.servingCert),
        key: readFileSync(paths0.servingKey),
        ca: readFileSync(paths0.caCert),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const subject = (req.socket as TLSSocket).getPeerCertificate().subject as { CN?: string; O?: string };
        seen.push({ CN: subject.CN, O: subject.O });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ major: '1', minor: '33', gitVersion: 'v1.33.0-gatehouse' }));
      },
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const paths = await ensureDevPki(join(root, 'data'), { host: '127.0.0.1', port });
      const child = spawn('kubectl', ['--kubeconfig', paths.kubeconfig, 'get', '--raw', '/version'], {
        env: { ...process.env, HOME: root, KUBECONFIG: '' },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
      });
      const [code] = (await once(child, 'close')) as [number];
      assert.equal(code, 0, err);
      assert.equal((JSON.parse(out) as { gitVersion: string }).gitVersion, 'v1.33.0-gatehouse');
      assert.deepEqual(seen.at(-1), { CN: 'admin', O: 'system:masters' });
    } finally {
      server.close();
    }
  });
});
