// YAML decoding that reports duplicate keys with their paths (the parser runs
// with uniqueKeys off, so a repeated key is kept for us to name rather than
// rejected) and bounds nesting depth, like decodeJson.
import { isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';
import { JsonBodyError, MAX_DEPTH, type DecodedJson } from './json.js';

function keyText(k: unknown): string {
  return isScalar(k) ? String(k.value) : String(k);
}

export function decodeYaml(text: string, maxDepth = MAX_DEPTH): DecodedJson {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) throw new JsonBodyError('syntax', doc.errors[0]!.message.split('\n', 1)[0]!);
  const duplicates: string[] = [];
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  const walk = (node: unknown, path: string, depth: number): void => {
    if (depth > maxDepth) throw new JsonBodyError('depth', `the body nests deeper than ${maxDepth} levels`);
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const k = keyText(pair.key);
        if (seen.has(k)) duplicates.push(join(path, k));
        seen.add(k);
        walk(pair.value, join(path, k), depth + 1);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, n) => walk(item, `${path}[${n}]`, depth + 1));
    }
  };
  walk(doc.contents as YamlNode | null, '', 1);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new JsonBodyError('syntax', err instanceof Error ? err.message.split('\n', 1)[0]! : String(err));
  }
  return { value, duplicates };
}
