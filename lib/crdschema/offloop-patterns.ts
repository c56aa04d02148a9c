// Patterns whose compile could hold the event loop. RE2JS takes seconds for
// a large pattern the CRD check accepted within its budget (and tens of ms for
// an IPv6-address one; a 12-character `^.{0,1000}$` costs as much), so such a
// pattern is not compiled on the loop when a custom resource's value first
// meets it: the write's `prevalidate` collects the values that meet it and has
// the CRD check worker test them; the synchronous validation reads the
// verdicts. The worker answers which patterns compiled in under 5 ms; those
// compile in place from then on. Short patterns with small repeat counts
// compile in place at once, as before.
import { RE2JS } from '@bufbuild/re2';

/** A pattern that compiles in place without asking: short, no repeat count over two digits (RE2 copies the repeated part that often). */
export function mayCompileSlowly(source: string): boolean {
  return source.length > 64 || /\{\s*\d{3}|,\s*\d{3}/.test(source);
}

/** A pattern as Go compiles it, or null when it does not compile (a CRD stored before it was checked: it checks nothing). */
export function compileRe2(source: string): RE2JS | null {
  try {
    return RE2JS.compile(source);
  } catch {
    return null;
  }
}

/** The verdicts kept per pattern: enough for the writes between a prevalidate and its validate. */
const KEPT_VERDICTS = 256;

/** A value the synchronous validation will test against a pattern that must not compile on the loop. */
export interface PatternTest {
  readonly pattern: OffLoopPattern;
  readonly value: string;
}

/** The tests being collected (collectPatternTests), or undefined while validating. */
let collecting: PatternTest[] | undefined;

export class OffLoopPattern {
  private re: RE2JS | null | undefined;
  private cheap = false;
  private readonly verdicts = new Map<string, boolean>();
  constructor(readonly source: string) {}

  /** The worker's answer: the value matches or not; `cheap` = it compiled there in under 5 ms. */
  answer(value: string, matches: boolean, cheap: boolean): void {
    if (cheap) this.cheap = true;
    if (this.verdicts.size >= KEPT_VERDICTS) this.verdicts.delete(this.verdicts.keys().next().value!);
    this.verdicts.set(value, matches);
  }

  test(value: string): boolean {
    if (this.re === undefined && !this.cheap) {
      const verdict = this.verdicts.get(value);
      if (verdict !== undefined) return verdict;
      if (collecting) {
        collecting.push({ pattern: this, value });
        return true;
      }
      // A validation without prevalidate (a CRD's defaults at its check, which runs off the loop when costly): in place.
    }
    if (this.re === undefined) this.re = compileRe2(this.source);
    return this.re === null || this.re.test(value);
  }
}

/** Whether collectPatternTests is running (anyOf then walks every branch). */
export function collectingPatternTests(): boolean {
  return collecting !== undefined;
}

/** The pattern tests `validate` would make on the loop, gathered by running it with every off-loop pattern answering true. */
export function collectPatternTests(validate: () => void): PatternTest[] {
  const tests: PatternTest[] = [];
  collecting = tests;
  try {
    validate();
  } finally {
    collecting = undefined;
  }
  return tests;
}
