// Field errors in the words of k8s.io/apimachinery/pkg/util/validation/field:
// `jwt[0].issuer.url: Required value`, `…: Invalid value: "x": detail`.

export class FieldPath {
  private constructor(private readonly text: string) {}
  static root(name = ''): FieldPath {
    return new FieldPath(name);
  }
  child(name: string): FieldPath {
    return new FieldPath(this.text === '' ? name : `${this.text}.${name}`);
  }
  index(i: number): FieldPath {
    return new FieldPath(`${this.text}[${i}]`);
  }
  key(k: string): FieldPath {
    return new FieldPath(`${this.text}[${k}]`);
  }
  toString(): string {
    return this.text;
  }
}

function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value);
  return JSON.stringify(value) ?? String(value);
}

export const fieldError = {
  required: (p: FieldPath, detail?: string): string => `${p}: Required value${detail ? `: ${detail}` : ''}`,
  invalid: (p: FieldPath, value: unknown, detail: string): string => `${p}: Invalid value: ${shown(value)}: ${detail}`,
  duplicate: (p: FieldPath, value: unknown): string => `${p}: Duplicate value: ${shown(value)}`,
  tooMany: (p: FieldPath, actual: number, max: number): string => `${p}: Too many: ${actual}: must have at most ${max} items`,
  unsupported: (p: FieldPath, value: unknown, supported: readonly string[]): string =>
    `${p}: Unsupported value: ${shown(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  forbidden: (p: FieldPath, detail: string): string => `${p}: Forbidden: ${detail}`,
  unknown: (p: FieldPath): string => `${p}: unknown field`,
  type: (p: FieldPath, value: unknown, want: string): string => `${p}: Invalid value: ${shown(value)}: must be ${want}`,
};
