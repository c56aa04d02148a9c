// A JSON LIST page over HTTPS, in process (client and server share it: only an
// A/B of builds means anything): N ConfigMaps of bench/scale.ts's shape
// created, then WALKS walks over every page of 500 (limit + continue); CPU µs
// a page, the first walk and the median of the later ones.
// For docs/decisions/2026-11-30-one-form-list-pages.md.
//   node --import tsx bench/list-page-http.ts   (N=10000 WALKS=4)
import { withInProcessServer, type Call } from './inprocess.js';
import { fillOverHttp } from './scale-store.js';

const N = Number(process.env['N'] ?? 10_000);
const WALKS = Number(process.env['WALKS'] ?? 4);
const NS = 'scale';
const P = `/api/v1/namespaces/${NS}/configmaps`;
/** CPU µs a page of one walk over every page. */
async function walk(call: Call): Promise<number> {
  const t0 = process.cpuUsage();
  let pages = 0;
  let token = '';
  for (;;) {
    const r = await call('GET', `${P}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`, '', '');
    if (r.status !== 200) throw new Error(`list: ${r.status}`);
    pages++;
    // Only the list's head is parsed (its metadata comes first): the client's share stays small.
    token = (JSON.parse(r.text.slice(0, r.text.indexOf(',"items":[')) + '}') as { metadata: { continue?: string } }).metadata.continue ?? '';
    if (!token) break;
  }
  const c = process.cpuUsage(t0);
  return (c.user + c.system) / pages;
}

await withInProcessServer('listpage', async (call) => {
  const ns = await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: NS } }), 'application/json');
  if (ns.status !== 201) throw new Error(`namespace: ${ns.status}`);
  await fillOverHttp(call, 0, N);
  const first = await walk(call);
  const later: number[] = [];
  for (let w = 1; w < WALKS; w++) later.push(await walk(call));
  later.sort((a, b) => a - b);
  console.log(
    `${N} objects: JSON LIST page of 500 over HTTPS (client and server): first walk ${first.toFixed(0)} µs CPU, later ${later[later.length >> 1]!.toFixed(0)} µs (median of ${later.length})`,
  );
});
