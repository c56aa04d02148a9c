// Forward auth behind a real nginx (Debian's package): nginx, started by the
// test with its own prefix and configuration on loopback ports, asks
// Gatehouse with `auth_request` over HTTPS, presenting its own client
// certificate (the trusted proxy, --forward-auth-proxy-names), and passes the
// user Gatehouse names to a test upstream with `auth_request_set`. RBAC on
// the path and verb decides; a client's own X-Remote-User never reaches the
// upstream; a 401 carries WWW-Authenticate through nginx.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { freePort, runGatehouse, spawnTracked, startGatehouse, stopAll, tempDir, type Gatehouse, type Proc } from '../e2e/helpers.js';
import { closeServer } from '../helpers/closeserver.js';

const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
const skip = NGINX ? false : 'nginx is not installed (apt-get install nginx)';
if (skip && process.env['CI'] === 'true') throw new Error(`CI: ${skip}`);
if (skip) console.log(`# skipping the nginx forward-auth test: ${skip}`);

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

function httpCall(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { ...headers, connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitListening(port: number, proc: Proc): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (!proc.running) throw new Error(`nginx exited: ${proc.stderr}`);
    try {
      await httpCall(port, 'GET', '/nginx-up');
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`nginx did not listen on ${port}: ${proc.stderr}`);
}

describe('forward auth behind a real nginx (auth_request)', { skip, timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let upstream: Server;
  let nginx: Proc;
  let port: number;
  const seen: Seen[] = [];
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

  before(async () => {
    const dir = tempDir('nginx-fa');
    writeFileSync(join(dir, 'tokens.csv'), ['alice-token,alice,u-alice,"readers,team-a"', 'bob-token,bob,u-bob,others', ''].join('\n'));
    gh = await startGatehouse({ flags: [`--token-auth-file=${join(dir, 'tokens.csv')}`, '--forward-auth-proxy-names=nginx-proxy'] });
    // nginx's client certificate, issued by the cluster CA (--client-ca-file), CN = the trusted proxy name.
    const kc = join(dir, 'nginx.kubeconfig');
    const made = await runGatehouse(['certs', 'client', '--dir', gh.dataDir, '--user', 'nginx-proxy', '--out', kc, '--server', gh.url]);
    assert.equal(made.code, 0, made.stderr);
    const user = (parseYaml(readFileSync(kc, 'utf8')) as { users: { user: Record<string, string> }[] }).users[0]!.user;
    writeFileSync(join(dir, 'nginx.crt'), Buffer.from(user['client-certificate-data']!, 'base64'));
    writeFileSync(join(dir, 'nginx.key'), Buffer.from(user['client-key-data']!, 'base64'));

    for (const [kind, body] of [
      ['clusterroles', { metadata: { name: 'app-reader' }, rules: [{ nonResourceURLs: ['/app', '/app/*'], verbs: ['get'] }] }],
      [
        'clusterrolebindings',
        {
          metadata: { name: 'app-reader' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'app-reader' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'readers' }],
        },
      ],
    ] as const) {
      const r = await gh.admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/${kind}`, body);
      assert.equal(r.status, 201, r.text);
    }

    upstream = createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('upstream says hello');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upPort = (upstream.address() as AddressInfo).port;

    port = await freePort();
    const conf = join(dir, 'nginx.conf');
    writeFileSync(
      conf,
      `
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location = /nginx-up { return 204; }
    location / {
      auth_request /_gatehouse;
      auth_request_set $gh_user $upstream_http_x_remote_user;
      auth_request_set $gh_groups $upstream_http_x_auth_request_groups;
      proxy_set_header X-Remote-User $gh_user;
      proxy_set_header X-Remote-Group "";
      proxy_set_header X-Auth-Request-Groups $gh_groups;
      proxy_set_header Authorization "";
      proxy_pass http://127.0.0.1:${upPort};
    }
    location = /_gatehouse {
      internal;
      proxy_pass https://127.0.0.1:${gh.port}/gatehouse/forward-auth;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URI $request_uri;
      proxy_set_header X-Original-Method $request_method;
      proxy_set_header X-Forwarded-Uri "";
      proxy_set_header X-Forwarded-Method "";
      proxy_ssl_certificate ${dir}/nginx.crt;
      proxy_ssl_certificate_key ${dir}/nginx.key;
      proxy_ssl_trusted_certificate ${gh.dataDir}/pki/ca.crt;
      proxy_ssl_verify on;
      proxy_ssl_name localhost;
    }
  }
}
`,
    );
    nginx = spawnTracked(NGINX!, ['-p', dir, '-c', conf, '-g', 'daemon off; master_process off;']);
    await waitListening(port, nginx);
  });

  after(async () => {
    nginx?.kill('SIGQUIT');
    if (upstream) await closeServer(upstream);
    await stopAll();
  });

  it('lets an allowed user through with the user and groups Gatehouse named', async () => {
    seen.length = 0;
    const r = await httpCall(port, 'GET', '/app/dashboard?x=1', bearer('alice-token'));
    assert.equal(r.status, 200, r.body);
    assert.equal(r.body, 'upstream says hello');
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.url, '/app/dashboard?x=1');
    assert.equal(seen[0]!.headers['x-remote-user'], 'alice');
    assert.equal(seen[0]!.headers['x-auth-request-groups'], 'readers,team-a,system:authenticated');
    assert.equal(seen[0]!.headers['authorization'], undefined);
  });

  it('refuses a user RBAC does not allow on that path (403), and the upstream is never asked', async () => {
    seen.length = 0;
    assert.equal((await httpCall(port, 'GET', '/app/dashboard', bearer('bob-token'))).status, 403);
    assert.equal((await httpCall(port, 'GET', '/admin', bearer('alice-token'))).status, 403);
    assert.equal(seen.length, 0);
  });

  it('decides by the verb of the original method: alice may get /app but not post to it', async () => {
    seen.length = 0;
    assert.equal((await httpCall(port, 'POST', '/app/dashboard', bearer('alice-token'))).status, 403);
    assert.equal(seen.length, 0);
  });

  it('never lets a client-sent X-Remote-User or X-Remote-Group reach the upstream', async () => {
    seen.length = 0;
    const r = await httpCall(port, 'GET', '/app/x', { ...bearer('alice-token'), 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' });
    assert.equal(r.status, 200);
    assert.equal(seen[0]!.headers['x-remote-user'], 'alice');
    assert.equal(seen[0]!.headers['x-remote-group'], undefined);
  });

  it('answers 401 with WWW-Authenticate: Bearer through nginx for no token and a wrong one', async () => {
    for (const h of [{}, bearer('nobody-token')]) {
      const r = await httpCall(port, 'GET', '/app/x', h);
      assert.equal(r.status, 401);
      assert.equal(r.headers['www-authenticate'], 'Bearer');
    }
  });

  it('refuses a dot segment or an encoded slash in the original URI (nginx passes $request_uri raw): nothing reaches the upstream', async () => {
    seen.length = 0;
    // Gatehouse answers 400; nginx treats any answer but 2xx, 401 and 403 as an error.
    assert.equal((await httpCall(port, 'GET', '/app/%2e%2e/admin', bearer('alice-token'))).status, 500);
    assert.equal((await httpCall(port, 'GET', '/app/a%2Fb', bearer('alice-token'))).status, 500);
    assert.equal(seen.length, 0);
  });
});
