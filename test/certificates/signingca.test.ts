// The signing CA read from files (lib/certificates/signingca.ts): read once,
// read again when a file changes, and errors that name the file and never
// show what it holds.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateCa } from '../../certs/pki.js';
import { SigningCaSource } from '../../lib/certificates/signingca.js';

describe('SigningCaSource', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-signingca-'));
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  const replace = (path: string, text: string) => {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  };

  it('keeps the CA while the files are unchanged and reads a rotated one', async () => {
    const one = generateCa('rotating-1');
    replace(certFile, one.certPem);
    replace(keyFile, one.keyPem);
    const source = new SigningCaSource({ certFile, keyFile });
    const first = await source.current();
    assert.match(first.cert.subject, /CN=rotating-1/);
    assert.equal(await source.current(), first, 'unchanged files are not read again');
    const two = generateCa('rotating-2');
    replace(keyFile, two.keyPem);
    replace(certFile, two.certPem);
    assert.match((await source.current()).cert.subject, /CN=rotating-2/);
  });

  it('names the file and never its contents when the key is unreadable or does not match', async () => {
    const ca = generateCa('broken');
    replace(certFile, ca.certPem);
    const secretish = 'THIS-IS-KEY-MATERIAL-0123456789';
    replace(keyFile, `-----BEGIN PRIVATE KEY-----\n${secretish}\n-----END PRIVATE KEY-----\n`);
    const source = new SigningCaSource({ certFile, keyFile });
    await assert.rejects(source.current(), (err: Error) => {
      assert.ok(err.message.startsWith(`the signing key "${keyFile}" could not be read`), err.message);
      assert.ok(!err.message.includes(secretish));
      return true;
    });
    const other = generateCa('other');
    replace(keyFile, other.keyPem);
    await assert.rejects(source.current(), (err: Error) => {
      assert.equal(err.message, `the signing key "${keyFile}" does not match the certificate "${certFile}"`);
      assert.ok(!err.message.includes(other.keyPem.split('\n')[1]!));
      return true;
    });
  });
});
