// A real browser for the login tests: Debian's Chromium driven by
// playwright-core (no downloaded browser build), trusting exactly the test
// provider's serving key. The plugin's --browser-command is a small script
// that hands the URL to this process over loopback HTTP; the test then
// drives the page as a person would.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
/** Why the browser tests skip, or false when they run; under CI=true a missing Chromium fails instead. */
export const chromiumSkip: string | false = hasChromium
  ? false
  : process.env['CI'] === 'true'
    ? false
    : `${CHROMIUM} is not installed (apt-get install chromium); skipping the browser login tests`;

export interface Browser {
  /** The executable to pass as --browser-command. */
  readonly command: string;
  /** URLs handed over so far. */
  readonly opened: string[];
  /** What to do with the next URL handed over (a person's steps). */
  onOpen(handler: (page: Page, url: string) => Promise<void>): void;
  /** Resolves when the handler of the last URL handed over has finished (rejects with its error). */
  settled(): Promise<void>;
  newPage(): Promise<Page>;
  /** Forgets the provider's session: the next login shows its pages again. */
  signOut(): Promise<void>;
  close(): Promise<void>;
}

export async function startBrowser(spki: string): Promise<Browser> {
  if (!hasChromium) throw new Error(`${CHROMIUM} is required under CI=true (apt-get install chromium)`);
  const { chromium } = await import('playwright-core');
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--ignore-certificate-errors-spki-list=${spki}`,
    ],
  });
  // The provider's pages link web fonts: nothing leaves the machine.
  await context.route(/^https?:\/\/(?!127\.0\.0\.1[:/]|localhost[:/])/, (route) => route.abort());
  const opened: string[] = [];
  let handler: ((page: Page, url: string) => Promise<void>) | undefined;
  let last: Promise<void> = Promise.resolve();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      opened.push(body);
      const h = handler;
      handler = undefined;
      last = (async () => {
        if (!h) throw new Error(`the plugin opened ${body} but the test expected no browser`);
        const page = await context.newPage();
        try {
          await h(page, body);
        } finally {
          await page.close();
        }
      })();
      last.catch(() => undefined);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const command = join(dir, 'open-browser');
  // An extensionless script is CommonJS to node: no top-level await.
  await writeFile(
    command,
    `#!${process.execPath}\n(async () => {\n  const r = await fetch('http://127.0.0.1:${(server.address() as AddressInfo).port}/open', { method: 'POST', body: process.argv[2] });\n  await r.text();\n})();\n`,
  );
  await chmod(command, 0o755);
  return {
    command,
    opened,
    onOpen(h) {
      handler = h;
    },
    settled: () => last,
    newPage: () => context.newPage(),
    signOut: () => context.clearCookies(),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await context.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A person's login at the provider's dev interaction pages (any login name, any password, then consent), up to the
 * loopback's answer page. A browser that still has a session at the provider skips the pages it has seen.
 */
export async function signIn(page: Page, url: string, login: string): Promise<string> {
  await page.goto(url);
  for (let step = 0; step < 4; step++) {
    const seen = await page.waitForSelector(
      'input[name=login], button:has-text("Continue"), body:has(h1:text-is("Authenticated")), body:has(h1:text-is("Login failed"))',
    );
    if ((await seen.evaluate((e) => e.tagName)) === 'BODY') return (await page.textContent('h1')) ?? '';
    if (await page.$('input[name=login]')) {
      await page.fill('input[name=login]', login);
      await page.fill('input[name=password]', 'any-password');
    }
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  }
  throw new Error(`the login did not reach the loopback page: ${page.url()}`);
}
