// The route table in force: the --routes file, or the one route every path
// takes (non-resource attributes), which is what a server without a table
// asks about.
import type { ServeOptions } from '../config/flags.js';
import { loadRouteTable } from './load.js';
import { parseRouteTable, type RouteTable, type RouteTableOptions } from './table.js';

export { RouteTable, type Route, type RouteMatch } from './table.js';
export { routeAttributes, verbOf } from './attributes.js';

export const EVERY_PATH: RouteTable = parseRouteTable({ routes: [{ name: 'every-path', prefix: '/' }] }, { upstreams: false, upstreamUrl: (u) => u });

export async function routeTableOf(opts: ServeOptions, o: RouteTableOptions): Promise<RouteTable> {
  return opts.routesFile ? loadRouteTable(opts.routesFile, o) : EVERY_PATH;
}
