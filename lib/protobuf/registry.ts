// Builds, once on first use, the protobufjs Root for every table and a
// "plan" per message: the per-field facts the JSON converters need, resolved
// to direct references so the hot path does no name lookups.
import protobuf from 'protobufjs/light.js';
import { KINDS, META_KINDS, PACKAGES } from './schema/index.js';
import { parseField, SCALARS, type FieldSpec } from './schema/types.js';
import { ownValue } from '../api/own.js';

/** Messages whose Go type has a hand-written JSON form (see wellknown.ts). */
export type Custom = 'Time' | 'MicroTime' | 'Duration' | 'FieldsV1' | 'RawExtension' | 'IntOrString' | 'Quantity';
const CUSTOM: Record<string, Custom> = {
  'meta.Time': 'Time',
  'meta.MicroTime': 'MicroTime',
  'meta.Duration': 'Duration',
  'meta.FieldsV1': 'FieldsV1',
  'runtime.RawExtension': 'RawExtension',
  'intstr.IntOrString': 'IntOrString',
  'resource.Quantity': 'Quantity',
};

export interface FieldPlan extends FieldSpec {
  /** Set when `type` is a message. */
  msg?: MessagePlan;
}

export interface MessagePlan {
  name: string; // qualified `alias.Name`
  type: protobuf.Type;
  fields: FieldPlan[];
  custom?: Custom;
  namedSlice: boolean;
  /** JSON name → path of proto names through inline fields, for the encoder. */
  byJson: Map<string, { via: FieldPlan[]; field: FieldPlan }>;
}

const fullNames = new Map(PACKAGES.map((p) => [p.alias, p.protoPackage]));
const fullName = (qualified: string) => {
  const i = qualified.indexOf('.');
  return `.${fullNames.get(qualified.slice(0, i))}.${qualified.slice(i + 1)}`;
};

function build(): Map<string, MessagePlan> {
  const nested: Record<string, unknown> = {};
  const specs = new Map<string, FieldSpec[]>();
  for (const pkg of PACKAGES) {
    let ns = nested;
    for (const part of pkg.protoPackage.split('.')) {
      ns = ((ns[part] ??= { nested: {} }) as { nested: Record<string, unknown> }).nested;
    }
    for (const [name, lines] of Object.entries(pkg.messages)) {
      const fields = lines.map((l) => parseField(l, pkg.alias));
      specs.set(`${pkg.alias}.${name}`, fields);
      const descriptor: Record<string, unknown> = {};
      for (const f of fields) {
        const type = SCALARS.has(f.type) ? f.type : fullName(f.type);
        descriptor[f.protoName] = f.keyType ? { keyType: f.keyType, type, id: f.id } : { type, id: f.id, ...(f.repeated ? { rule: 'repeated' } : {}) };
      }
      // Types read from JSON default to proto3 (implicit presence) in protobufjs; k8s is proto2.
      ns[name] = { edition: 'proto2', fields: descriptor };
    }
  }
  const root = protobuf.Root.fromJSON({ nested } as protobuf.INamespace);
  root.resolveAll();

  const plans = new Map<string, MessagePlan>();
  for (const [name, fields] of specs) {
    const alias = name.slice(0, name.indexOf('.'));
    const custom = CUSTOM[name];
    plans.set(name, {
      name,
      type: root.lookupType(fullName(name)),
      fields: fields as FieldPlan[],
      ...(custom ? { custom } : {}),
      namedSlice: PACKAGES.find((p) => p.alias === alias)?.namedSlices?.includes(name.slice(alias.length + 1)) ?? false,
      byJson: new Map(),
    });
  }
  for (const plan of plans.values()) {
    for (const f of plan.fields) if (!SCALARS.has(f.type)) f.msg = plans.get(f.type);
  }
  for (const plan of plans.values()) collectJson(plan, plan, []);
  return plans;
}

function collectJson(target: MessagePlan, plan: MessagePlan, via: FieldPlan[]): void {
  for (const f of plan.fields) {
    if (f.inline && f.msg) collectJson(target, f.msg, [...via, f]);
    else target.byJson.set(f.jsonName, { via, field: f });
  }
}

// Built on first use, not at load: ~200 ms of a start's CPU that a server answering no protobuf never spends.
let built: Map<string, MessagePlan> | undefined;
const plans = (): Map<string, MessagePlan> => (built ??= build());

export function planFor(qualified: string): MessagePlan {
  const plan = plans().get(qualified);
  if (!plan) throw new Error(`no message plan for ${qualified}`);
  return plan;
}

/** The message for an apiVersion/kind, or undefined when this folder has no schema for it. */
export function planForKind(apiVersion: string, kind: string): MessagePlan | undefined {
  const group = ownValue(KINDS, apiVersion) as (typeof KINDS)[string] | undefined;
  if (group?.kinds.includes(kind)) return plans().get(`${group.alias}.${kind}`);
  if (META_KINDS.includes(kind) && (group || apiVersion.includes('/'))) return plans().get(`meta.${kind}`);
  return undefined;
}

/** The field number of `protoName` in `plan` (from the generated table, never a literal). */
export function fieldId(plan: MessagePlan, protoName: string): number {
  const f = plan.fields.find((x) => x.protoName === protoName);
  if (!f) throw new Error(`${plan.name} has no field ${protoName}`);
  return f.id;
}
