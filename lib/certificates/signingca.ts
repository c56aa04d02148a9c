// The CA a signer issues with, read from its certificate and key files and read
// again whenever either file changes (kube-controller-manager's dynamic serving
// content): a rotated CA on disk is used from the next signature on, without a
// restart. Errors name the file, never its contents.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { SigningCa } from './issue.js';

export interface SigningCaFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

async function stamp(path: string): Promise<string> {
  const s = await stat(path);
  return `${s.mtimeMs}:${s.size}:${s.ino}`;
}

export class SigningCaSource {
  private loaded: { stamp: string; ca: SigningCa } | undefined;

  constructor(readonly files: SigningCaFiles) {}

  /** The CA as the files hold it now. */
  async current(): Promise<SigningCa> {
    const now = `${await stamp(this.files.certFile)}|${await stamp(this.files.keyFile)}`;
    if (this.loaded?.stamp === now) return this.loaded.ca;
    const ca = await this.read();
    this.loaded = { stamp: now, ca };
    return ca;
  }

  private async read(): Promise<SigningCa> {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(await readFile(this.files.certFile));
    } catch (err) {
      throw new Error(`the signing certificate "${this.files.certFile}" could not be read: ${(err as NodeJS.ErrnoException).code ?? 'not a PEM certificate'}`);
    }
    let key;
    try {
      key = createPrivateKey(await readFile(this.files.keyFile));
    } catch (err) {
      // The parser's message may quote the file; only its code is shown.
      throw new Error(`the signing key "${this.files.keyFile}" could not be read: ${(err as NodeJS.ErrnoException).code ?? 'not a PEM private key'}`);
    }
    if (!cert.checkPrivateKey(key)) throw new Error(`the signing key "${this.files.keyFile}" does not match the certificate "${this.files.certFile}"`);
    return { cert, key };
  }
}
