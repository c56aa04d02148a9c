// The front-proxy client certificate the gateway presents to aggregated
// backends: --proxy-client-cert-file/--proxy-client-key-file, else the dev
// PKI's front-proxy-client when it exists, else none (backends then cannot
// trust the gateway's identity headers; the start log says so).
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { devPkiPaths } from '../../certs/devpki.js';
import { ConfigError } from '../../lib/config/error.js';
import type { ProxyClientCert } from './transport.js';

export async function loadProxyClientCert(
  o: { proxyClientCertFile: string | undefined; proxyClientKeyFile: string | undefined; dataDir: string },
  log: (msg: string) => void,
): Promise<ProxyClientCert | undefined> {
  let certFile = o.proxyClientCertFile;
  let keyFile = o.proxyClientKeyFile;
  if (!certFile || !keyFile) {
    const dev = devPkiPaths(o.dataDir);
    const [c, k] = await Promise.all([
      readFile(dev.frontProxyClientCert, 'utf8').catch(() => undefined),
      readFile(dev.frontProxyClientKey, 'utf8').catch(() => undefined),
    ]);
    if (c === undefined || k === undefined) {
      log('aggregation: no --proxy-client-cert-file and no dev front-proxy certificate: aggregated backends will see no client certificate');
      return undefined;
    }
    return { certPem: c, keyPem: k };
  }
  const [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  try {
    new X509Certificate(certPem);
  } catch {
    throw new ConfigError('no PEM certificate found', { flag: '--proxy-client-cert-file', file: certFile });
  }
  try {
    createPrivateKey(keyPem);
  } catch {
    throw new ConfigError('no PEM private key found', { flag: '--proxy-client-key-file', file: keyFile });
  }
  return { certPem, keyPem };
}
