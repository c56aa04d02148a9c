// Table columns of a custom resource from its CRD version's
// additionalPrinterColumns, as kube's apiextensions tableconvertor renders
// them: Name first, then each column's first JSONPath result typed by the
// column's type (nil when absent or of another type), dates as ages; with no
// columns declared, kube's default Age column. Each jsonPath is parsed once
// with kube's JSONPath grammar (lib/jsonpath); when one does not parse, the
// CRD is printed with kube's default table (Name, Created At), as kube's CRD
// handler falls back when its table convertor cannot be built.
import type { KObject } from '../api/meta.js';
import { compilePath, selectAll, type Path } from '../jsonpath/index.js';
import { CREATION_DESCRIPTION, DEFAULT_COLUMNS, humanDuration, nameColumn } from '../registry/columns.js';
import type { Column } from '../registry/types.js';
import { at, str } from '../registry/fields.js';

const TYPES = new Set<Column['type']>(['string', 'integer', 'number', 'boolean', 'date']);

/** kube's cellForJSONValue, and the string column's JSONPath printing. */
function cellOf(type: Column['type'], value: unknown, now: number): string | number | boolean | null {
  if (value === undefined || value === null) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : JSON.stringify(value);
    case 'date': {
      if (typeof value !== 'string') return null;
      const ms = Date.parse(value);
      return Number.isNaN(ms) ? '<invalid>' : humanDuration(now - ms);
    }
  }
}

function printerColumn(def: unknown, path: Path): Column {
  const type = str(def, 'type') as Column['type'];
  const priority = at(def, 'priority');
  const format = str(def, 'format');
  const t: Column['type'] = TYPES.has(type) ? type : 'string';
  return {
    name: str(def, 'name'),
    type: t,
    ...(format ? { format } : {}),
    description: str(def, 'description'),
    priority: typeof priority === 'number' && priority > 0 ? 1 : 0,
    cell: (o: KObject, now: number) => cellOf(t, selectAll(o, path)[0], now),
  };
}

export function crdColumns(printerColumns: readonly unknown[]): readonly Column[] {
  if (printerColumns.length === 0) {
    const age = { name: 'Age', type: 'date', description: CREATION_DESCRIPTION };
    return [
      nameColumn(),
      printerColumn(age, [
        { kind: 'field', name: 'metadata' },
        { kind: 'field', name: 'creationTimestamp' },
      ]),
    ];
  }
  const out: Column[] = [nameColumn()];
  for (const def of printerColumns) {
    const c = compilePath(str(def, 'jsonPath'));
    if ('error' in c) return DEFAULT_COLUMNS;
    out.push(printerColumn(def, c.path));
  }
  return out;
}
