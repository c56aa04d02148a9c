// bench/cg-list.mjs's client (a child process): C keep-alive connections, each walking the `scale` namespace's
// ConfigMaps by limit=500 pages and continue tokens; WARM pages, a message, then N pages on 'go', a message.
import { Agent, request } from 'node:https';
const port = Number(process.env.CG_PORT);
const tls = JSON.parse(process.env.CG_TLS);
const C = Number(process.env.C ?? 4);
const agent = new Agent({ keepAlive: true, ...tls, maxSockets: C });
const P = '/api/v1/namespaces/scale/configmaps?limit=500';
const get = (path) =>
  new Promise((res, rej) => {
    const r = request({ host: '127.0.0.1', port, path, agent }, (resp) => {
      const chunks = [];
      resp.on('data', (d) => chunks.push(d));
      resp.on('end', () =>
        res({ bytes: chunks.reduce((n, c) => n + c.length, 0), status: resp.statusCode, head: Buffer.concat(chunks).toString('latin1', 0, 600) }),
      );
    });
    r.on('error', rej);
    r.end();
  });
const cont = Array(C).fill(undefined);
let bad = 0;
let bytes = 0;
// MODE=get: GETs of random ones of the COUNT stored ConfigMaps (cm-000000…) instead of pages.
const COUNT = Number(process.env.COUNT ?? 1000);
const names = Array.from({ length: 4096 }, () => `/api/v1/namespaces/scale/configmaps/cm-${String(Math.floor(Math.random() * COUNT)).padStart(6, '0')}`);
let g = 0;
async function pages(n) {
  if (process.env.MODE === 'get') {
    let left = n;
    await Promise.all(
      cont.map(async () => {
        while (left-- > 0) if ((await get(names[g++ & 4095])).status !== 200) bad++;
      }),
    );
    return;
  }
  let left = n;
  await Promise.all(
    cont.map(async (_, c) => {
      while (left > 0) {
        left--;
        const r = await get(cont[c] ? `${P}&continue=${encodeURIComponent(cont[c])}` : P);
        if (r.status !== 200) bad++;
        bytes += r.bytes;
        cont[c] = /"continue":"([^"]+)"/.exec(r.head)?.[1];
      }
    }),
  );
}
// Each connection starts at its own page of the first walk (spread like the bench's 50).
if (process.env.MODE !== 'get')
  for (let c = 0; c < C; c++)
    for (let k = 0; k < c * 7; k++) {
      const r = await get(cont[c] ? `${P}&continue=${encodeURIComponent(cont[c])}` : P);
      cont[c] = /"continue":"([^"]+)"/.exec(r.head)?.[1];
    }
await pages(Number(process.env.WARM ?? 400));
bytes = 0;
process.send('warm');
await new Promise((r) => process.once('message', r));
await pages(Number(process.env.N ?? 400));
process.send(`pages ${process.env.N ?? 400} bad ${bad} bytes/page ${(bytes / Number(process.env.N ?? 400)).toFixed(0)}`);
process.exit(0);
