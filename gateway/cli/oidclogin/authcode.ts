// Authorization code with PKCE on a loopback redirect, as kubelogin does it:
// listen on the first free --listen-address, send the browser to the
// provider with redirect_uri http://localhost:<port>, take one callback
// (state checked, an error parameter shown), exchange the code, and close
// the listener. The browser's page says how it went.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import type { LoginOptions } from './flags.js';
import { LoginError, describeError, type Provider } from './provider.js';
import type { TokenResponse } from './grants.js';
import { openUrl } from './browser.js';
import { authRequest } from './authrequest.js';

function listenOn(address: string): Promise<Server> {
  const cut = address.lastIndexOf(':');
  const host = address.slice(0, cut).replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(address.slice(cut + 1));
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** The first --listen-address that binds; one in use is skipped with a note. */
async function listenFirst(addresses: readonly string[], warn: (m: string) => void): Promise<Server> {
  let last: unknown;
  for (const a of addresses) {
    try {
      return await listenOn(a);
    } catch (err) {
      last = err;
      warn(`note: cannot listen on ${a} (${(err as NodeJS.ErrnoException).code ?? String(err)}), trying the next --listen-address`);
    }
  }
  throw new LoginError(`no --listen-address could be bound (${addresses.join(', ')}): ${(last as NodeJS.ErrnoException)?.code ?? String(last)}`);
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(res: ServerResponse, status: number, title: string, text: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
  res.end(`<!doctype html><title>${escapeHtml(title)}</title><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`);
}

export async function authorizationCodeLogin(
  p: Provider,
  o: LoginOptions,
  scopes: string[],
  deadline: number,
  warn: (m: string) => void,
): Promise<TokenResponse> {
  const server = await listenFirst(o.listenAddresses, warn);
  const port = (server.address() as AddressInfo).port;
  const redirectUri = o.redirectUrl ?? `http://localhost:${port}`;
  const callbackPath = new URL(redirectUri).pathname || '/';
  const request = await authRequest(p, o, scopes, redirectUri);
  const { state, nonce } = request;

  let answered = false;
  const result = new Promise<TokenResponse>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new LoginError(`no browser login arrived within --authentication-timeout-sec=${o.authenticationTimeoutSec}`)),
      Math.max(0, deadline - Date.now()),
    );
    const finish = (fn: () => void): void => {
      clearTimeout(timer);
      // One answer per login: the port is closed to any later callback.
      server.close();
      server.closeIdleConnections();
      fn();
    };
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method !== 'GET' || url.pathname !== callbackPath || answered) {
        page(res, 404, 'Not found', answered ? 'This login has already been answered.' : 'This is the kubectl login callback.');
        return;
      }
      const q = url.searchParams;
      if (q.get('state') !== state) {
        // A stray or forged callback: refused, and the login fails rather than wait on a redirect that may never come.
        answered = true;
        page(res, 400, 'Login failed', 'The state parameter does not match this login.');
        finish(() => reject(new LoginError('the authorization response was refused: its state does not match the one this login sent')));
        return;
      }
      answered = true;
      const error = q.get('error');
      if (error !== null) {
        const description = q.get('error_description');
        page(res, 400, 'Login failed', description ?? error);
        finish(() => reject(new LoginError(`the provider refused the login: ${error}${description ? `: ${description}` : ''}`)));
        return;
      }
      const code = q.get('code');
      if (!code) {
        page(res, 400, 'Login failed', 'The callback carries no code.');
        finish(() => reject(new LoginError('the authorization response carries no code')));
        return;
      }
      client.genericGrantRequest(p.config, 'authorization_code', request.exchange(code)).then(
        (tokens) => {
          if (o.openUrlAfterAuthentication) {
            res.writeHead(302, { location: o.openUrlAfterAuthentication, connection: 'close' });
            res.end();
          } else page(res, 200, 'Authenticated', 'You have logged in to the cluster. You may close this window.');
          finish(() => resolve({ tokens, nonce }));
        },
        (err: unknown) => {
          const msg = `the code exchange failed: ${describeError(err, p.issuer, o.authenticationTimeoutSec)}`;
          page(res, 400, 'Login failed', msg);
          finish(() => reject(new LoginError(msg)));
        },
      );
    });
  });
  openUrl(o, request.url, warn);
  try {
    return await result;
  } finally {
    server.close();
    server.closeAllConnections();
  }
}
