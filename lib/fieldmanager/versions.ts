// Owners recorded in another version of the kind (custom resources served in
// several versions). kube tracks each managedFields entry in the apiVersion it
// was written with and, to compare, converts the live and the new object to
// that version (structured-merge-diff's Converter). Conversions are async here
// (a CRD's webhook) while the ownership algorithm is synchronous and cheap, so
// the algorithm asks for a conversion by throwing NeedConversion; the driver
// (`withConversions`) performs it and runs the algorithm again, until every
// conversion it needs is known. A run with every owner in the request's version
// asks for none and runs once.
import type { Node } from '../schema/model.js';

type Obj = Record<string, unknown>;

/** What the ownership algorithm sees of the kind's versions. */
export interface Versions {
  /** The request's apiVersion: the version the live object, the intent and the result are in. */
  readonly current: string;
  /** `obj` in `apiVersion`; throws ConversionFailure (or NeedConversion, caught by the driver). */
  convert(obj: Obj, apiVersion: string): Obj;
  /** The schema node of the kind in `apiVersion`. */
  node(apiVersion: string): Node | undefined;
}

/** The conversions one write may ask for, performed by the caller. */
export interface AsyncConverter {
  /** `obj` (carrying its own apiVersion) in `apiVersion`; rejects when it cannot be converted. */
  convert(obj: Obj, apiVersion: string): Promise<Obj>;
  node(apiVersion: string): Node | undefined;
}

/** A conversion the algorithm needs and the driver has not made yet. */
class NeedConversion extends Error {
  constructor(
    readonly key: string,
    readonly obj: Obj,
    readonly apiVersion: string,
  ) {
    super(`conversion to ${apiVersion} needed`);
    this.name = 'NeedConversion';
  }
}

/** A conversion that failed: `cause` is the converter's error, whose message kube answers with. */
export class ConversionFailure extends Error {
  constructor(
    override readonly cause: unknown,
    message = cause instanceof Error ? cause.message : String(cause),
  ) {
    super(message);
    this.name = 'ConversionFailure';
  }
}

/** At most this many conversions per write: one per owner version and step, a handful in practice. */
const MAX_CONVERSIONS = 256;

/**
 * Runs `run` with the kind's versions until it completes without asking for an
 * unknown conversion. `run` must be deterministic (it is run again from the start
 * after each conversion) and must not swallow errors it does not know.
 */
export async function withConversions<T>(conv: AsyncConverter, current: string, run: (v: Versions) => T): Promise<T> {
  const done = new Map<string, Obj | ConversionFailure>();
  const versions: Versions = {
    current,
    node: (apiVersion) => conv.node(apiVersion),
    convert(obj, apiVersion) {
      if (obj['apiVersion'] === apiVersion) return obj;
      const key = `${apiVersion}\n${JSON.stringify(obj)}`;
      const hit = done.get(key);
      if (hit instanceof ConversionFailure) throw hit;
      if (hit) return hit;
      throw new NeedConversion(key, obj, apiVersion);
    },
  };
  for (;;) {
    try {
      return run(versions);
    } catch (err) {
      if (!(err instanceof NeedConversion)) throw err;
      if (done.size >= MAX_CONVERSIONS) throw new Error(`more than ${MAX_CONVERSIONS} conversions for one write`);
      try {
        done.set(err.key, await conv.convert(err.obj, err.apiVersion));
      } catch (failed) {
        done.set(err.key, new ConversionFailure(failed));
      }
    }
  }
}
