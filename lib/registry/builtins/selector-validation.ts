// metav1validation.ValidateLabelSelector: the label selectors stored in
// objects (webhooks' namespaceSelector and objectSelector, policy bindings'
// selectors), with apimachinery's field paths and words.
import { isPlainObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { isQualifiedName, isValidLabelValue } from '../names.js';

export function validateLabelSelector(sel: unknown, path: string): StatusCause[] {
  if (sel === undefined || sel === null) return [];
  if (!isPlainObject(sel)) return [cause.invalid(path, sel, 'must be an object')];
  const causes: StatusCause[] = [];
  const labels = sel['matchLabels'];
  if (isPlainObject(labels)) {
    for (const [k, v] of Object.entries(labels)) {
      for (const m of isQualifiedName(k)) causes.push(cause.invalid(`${path}.matchLabels`, k, m));
      const value = typeof v === 'string' ? v : '';
      for (const m of isValidLabelValue(value)) causes.push(cause.invalid(`${path}.matchLabels`, value, m));
    }
  }
  const exprs = sel['matchExpressions'];
  if (Array.isArray(exprs)) {
    exprs.forEach((e: unknown, i) => {
      const at = `${path}.matchExpressions[${i}]`;
      const r = isPlainObject(e) ? e : {};
      const op = typeof r['operator'] === 'string' ? r['operator'] : '';
      const values = Array.isArray(r['values']) ? r['values'] : [];
      if (op === 'In' || op === 'NotIn') {
        if (values.length === 0) causes.push(cause.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      } else if (op === 'Exists' || op === 'DoesNotExist') {
        if (values.length > 0) causes.push(cause.forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      } else {
        causes.push(cause.invalid(`${at}.operator`, op, 'not a valid selector operator'));
      }
      const key = typeof r['key'] === 'string' ? r['key'] : '';
      for (const m of isQualifiedName(key)) causes.push(cause.invalid(`${at}.key`, key, m));
      values.forEach((v: unknown, j) => {
        const value = typeof v === 'string' ? v : '';
        for (const m of isValidLabelValue(value)) causes.push(cause.invalid(`${at}.values[${j}]`, value, m));
      });
    });
  }
  return causes;
}
