// A metav1.LabelSelector as text, as kube renders it in tables (the Selector
// column) and in a Scale's status.selector: requirements sorted by key,
// `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`.
import { labelSelectorFromObject, type LabelRequirement } from '../../api/selectors.js';

function requirementText(r: LabelRequirement): string {
  switch (r.operator) {
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${[...r.values].sort().join(',')})`;
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    default:
      return `${r.key}${r.operator}${r.values.join(',')}`;
  }
}

/** labels.Selector.String() of LabelSelectorAsSelector; undefined when the selector is invalid. */
export function labelSelectorText(selector: unknown): string | undefined {
  try {
    return labelSelectorFromObject(selector).requirements.map(requirementText).join(',');
  } catch {
    return undefined;
  }
}

/** metav1.FormatLabelSelector: `<none>` for an empty or missing selector, `<error>` for an invalid one. */
export function formatLabelSelector(selector: unknown): string {
  const text = labelSelectorText(selector);
  return text === undefined ? '<error>' : text === '' ? '<none>' : text;
}
