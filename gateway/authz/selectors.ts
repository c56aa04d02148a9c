// The selector part of authorization attributes (kube's AuthorizeWithSelectors):
// list, watch and deletecollection carry their parsed field and label
// selectors; a list or watch narrowed to one object by `metadata.name=x`
// names that object, as kube-apiserver's RequestInfo does.
import { parseFieldSelector, parseLabelSelector, type FieldRequirement, type LabelRequirement } from '../../lib/api/selectors.js';

const SELECTOR_VERBS: ReadonlySet<string> = new Set(['list', 'watch', 'deletecollection']);

export interface SelectorAttributes {
  fieldSelector?: readonly FieldRequirement[];
  labelSelector?: readonly LabelRequirement[];
  /** Set when a list/watch asks for exactly one name. */
  name?: string;
}

/** path.IsValidPathSegmentName: such a name could be a URL path segment. */
function validSegment(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}

/** What a verb without selectors gets (shared: no object made per request). */
const NONE: SelectorAttributes = Object.freeze({});

export function selectorAttributes(verb: string, query: URLSearchParams): SelectorAttributes {
  if (!SELECTOR_VERBS.has(verb)) return NONE;
  const out: SelectorAttributes = {};
  const fs = query.get('fieldSelector');
  if (fs) {
    try {
      const reqs = Object.freeze(parseFieldSelector(fs));
      if (reqs.length > 0) out.fieldSelector = reqs;
      if (verb !== 'deletecollection') {
        const names = reqs.filter((r) => r.field === 'metadata.name' && r.operator === '=');
        if (names.length === 1 && validSegment(names[0]!.value)) out.name = names[0]!.value;
      }
    } catch {
      // Unparseable: authorize as the unrestricted request; the backend rejects the selector itself.
    }
  }
  const ls = query.get('labelSelector');
  if (ls) {
    try {
      const reqs = parseLabelSelector(ls).requirements;
      if (reqs.length > 0) out.labelSelector = reqs;
    } catch {
      // As above.
    }
  }
  return out;
}
