// Reads the --routes file (YAML or JSON) into a RouteTable; a problem names
// the flag, the file and the route.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../../lib/config/error.js';
import { parseRouteTable, type RouteTable, type RouteTableOptions } from './table.js';

export async function loadRouteTable(file: string, opts: RouteTableOptions): Promise<RouteTable> {
  let doc: unknown;
  try {
    doc = parseYaml(await readFile(file, 'utf8'));
  } catch (err) {
    const why =
      err instanceof Error && 'code' in err && err.code === 'ENOENT'
        ? 'no such file'
        : `not YAML or JSON: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
    throw new ConfigError(why, { flag: '--routes', file });
  }
  try {
    return parseRouteTable(doc, opts);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(err.reason, { flag: '--routes', file, ...(err.where.field ? { field: err.where.field } : {}) });
    throw err;
  }
}
