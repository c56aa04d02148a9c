// Shared pieces of the authorization tests: clients with certificates for
// any user (signed by the test server's dev CA), and bounded waiting.
import { readFile } from 'node:fs/promises';
import { devPkiPaths } from '../../certs/devpki.js';
import { generateClientCert } from '../../certs/pki.js';
import { HttpsClient } from '../helpers/client.js';
import type { TestServer } from '../helpers/server.js';

export { eventually } from '../helpers/eventually.js';

/** A client that authenticates as `user` in `groups` with a client certificate from the server's CA. */
export async function clientAs(srv: TestServer, user: string, groups: string[] = []): Promise<HttpsClient> {
  const pki = devPkiPaths(srv.dataDir);
  const [certPem, keyPem] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.caKey, 'utf8')]);
  const leaf = generateClientCert({ certPem, keyPem }, { user, groups });
  return new HttpsClient(srv.url, { ca: certPem, cert: leaf.certPem, key: leaf.keyPem });
}
