// kube-apiserver's APF classification: the FlowSchemas, in order of
// matchingPrecedence then name, are tried against the request's user and
// attributes; the first whose rules match (and whose priority level exists)
// names the level and, with its distinguisher, the flow. The objects are kept
// current by a Reflector, so edits apply without a restart on every process
// sharing the store; until the first list, kube's mandatory objects (held in
// memory, as kube's config controller does) classify everything.
import type { KObject } from '../../lib/api/meta.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { Reflector, type ReflectedType } from '../../lib/api/reflector.js';
import { builtinRegistry } from '../../lib/registry/index.js';
import { mandatoryFlowSchemas, mandatoryPriorityLevels } from '../../policies/flowcontrol/index.js';
import type { UserInfo } from '../../lib/api/meta.js';
import {
  flowSchemaOf,
  priorityLevelOf,
  type FlowSchema,
  type NonResourceRule,
  type PolicyRule,
  type PriorityLevel,
  type ResourceRule,
  type Subject,
} from './config.js';

const GROUP = 'flowcontrol.apiserver.k8s.io';
const SA_PREFIX = 'system:serviceaccount:';

/** Request shapes remembered per user object (a client sending more starts over). */
const MEMO_PER_USER = 256;

interface Memo {
  generation: number;
  /**
   * Answers by request shape, made at the user object's second shape: a connection that repeats one (a
   * watch, most controllers) never needs it, and an idle watch's connection held an empty-ish Map (~320 B).
   */
  answers: Map<string, Classification> | undefined;
  /** The user's last request and its answer. */
  last: FlowShape | undefined;
  lastAnswer: Classification | undefined;
}

/** Whether two requests take the same classification (the fields of the memo key). */
function sameShape(a: FlowShape, b: FlowShape): boolean {
  // One request target's requests share their RequestInfo (pipeline/context.ts).
  if (a === b) return true;
  if (a.isResourceRequest !== b.isResourceRequest || a.verb !== b.verb) return false;
  return a.isResourceRequest
    ? a.namespace === b.namespace && a.resource === b.resource && a.apiGroup === b.apiGroup && a.subresource === b.subresource
    : a.path === b.path;
}

function shapeKey(q: FlowShape): string {
  return q.isResourceRequest ? `${q.verb}\0${q.apiGroup}\0${q.resource}\0${q.subresource}\0${q.namespace}` : `${q.verb}\0\0${q.path}`;
}

/** What a request is, for classification: the parts of its RequestInfo that rules read (a RequestInfo is one). */
export interface FlowShape {
  isResourceRequest: boolean;
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  path: string;
}

/** A request's shape and its user. */
export interface FlowRequest extends FlowShape {
  user: UserInfo;
}

export interface Classification {
  schema: FlowSchema;
  level: PriorityLevel;
  /** The flow: the schema's name and its distinguisher's value. */
  flow: string;
  /** The distinguisher's value alone ('' without a distinguisher method). */
  distinguisher: string;
}

const has = (list: readonly string[], v: string) => list.includes('*') || list.includes(v);

function subjectMatches(s: Subject, user: UserInfo): boolean {
  if (s.kind === 'User') return s.name === '*' || s.name === user.username;
  if (s.kind === 'Group') return s.name === '*' || user.groups.includes(s.name);
  if (s.kind !== 'ServiceAccount' || !user.username.startsWith(SA_PREFIX)) return false;
  const [ns, name, ...rest] = user.username.slice(SA_PREFIX.length).split(':');
  return rest.length === 0 && ns === s.namespace && (s.name === '*' || s.name === name);
}

function resourceMatches(r: ResourceRule, q: FlowShape): boolean {
  if (!has(r.verbs, q.verb) || !has(r.apiGroups, q.apiGroup)) return false;
  const resource = q.subresource ? `${q.resource}/${q.subresource}` : q.resource;
  if (!has(r.resources, resource)) return false;
  return q.namespace === '' ? r.clusterScope : has(r.namespaces, q.namespace);
}

/** `*`, an exact path, or `/prefix/*` (the prefix itself and everything under it). */
function urlMatches(pattern: string, path: string): boolean {
  if (pattern === '*' || pattern === path) return true;
  if (!pattern.endsWith('/*')) return false;
  const prefix = pattern.slice(0, -1);
  return path.startsWith(prefix) || path === prefix.slice(0, -1);
}

function nonResourceMatches(r: NonResourceRule, q: FlowShape): boolean {
  return has(r.verbs, q.verb) && r.urls.some((u) => urlMatches(u, q.path));
}

function ruleMatches(rule: PolicyRule, user: UserInfo, q: FlowShape): boolean {
  if (!rule.subjects.some((s) => subjectMatches(s, user))) return false;
  return q.isResourceRequest ? rule.resourceRules.some((r) => resourceMatches(r, q)) : rule.nonResourceRules.some((r) => nonResourceMatches(r, q));
}

function byPrecedence(a: FlowSchema, b: FlowSchema): number {
  return a.precedence - b.precedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The stored object as the registry defaults it (the in-memory mandatory objects). */
function defaulted(o: KObject, plural: string): KObject {
  const copy = structuredClone(o);
  builtinRegistry().lookup(GROUP, 'v1', plural)?.defaults?.(copy);
  return copy;
}

export class Classifier {
  private schemas = new Map<string, FlowSchema>();
  private readonly levels = new Map<string, PriorityLevel>();
  private ordered: FlowSchema[] = [];
  /** Bumped by every change of the schemas or levels: remembered answers of an older generation are dropped. */
  private generation = 0;
  private readonly memo = new WeakMap<UserInfo, Memo>();
  private readonly listeners: Array<(levels: ReadonlyMap<string, PriorityLevel>) => void> = [];
  private readonly fallback: Classification;

  constructor() {
    for (const o of mandatoryPriorityLevels()) {
      const l = priorityLevelOf(defaulted(o, 'prioritylevelconfigurations'));
      this.levels.set(l.name, l);
    }
    for (const o of mandatoryFlowSchemas()) {
      const s = flowSchemaOf(defaulted(o, 'flowschemas'));
      this.schemas.set(s.name, s);
    }
    this.reorder();
    const catchAll = this.schemas.get('catch-all')!;
    this.fallback = { schema: catchAll, level: this.levels.get('catch-all')!, flow: 'catch-all', distinguisher: '' };
  }

  /** Called with every level after each change (the dispatcher resizes its levels). */
  onLevels(fn: (levels: ReadonlyMap<string, PriorityLevel>) => void): void {
    this.listeners.push(fn);
    fn(this.levels);
  }

  priorityLevels(): ReadonlyMap<string, PriorityLevel> {
    return this.levels;
  }

  classify(q: FlowRequest): Classification {
    return this.classifyAs(q.user, q);
  }

  /**
   * `classify` with the user apart from the shape: the dispatcher passes a request's own RequestInfo,
   * making no object per request (APF's `admit` built one of 8 members for every request).
   */
  classifyAs(user: UserInfo, q: FlowShape): Classification {
    // A keep-alive client sends the same user object (authentication caches it) and mostly the same few
    // request shapes: its answers are remembered per user object until the objects change (callgrind:
    // matching every FlowSchema was most of the ~160K instructions APF added to an ordinary user's GET).
    let memo = this.memo.get(user);
    if (!memo || memo.generation !== this.generation) {
      memo = { generation: this.generation, answers: undefined, last: undefined, lastAnswer: undefined };
      this.memo.set(user, memo);
    }
    // The same shape as this user's last request (a client repeating itself): no key string built and hashed.
    const last = memo.last;
    if (last !== undefined && sameShape(last, q)) return memo.lastAnswer!;
    let c: Classification | undefined;
    if (last === undefined) c = this.match(user, q);
    else {
      let answers = memo.answers;
      if (answers === undefined) {
        answers = memo.answers = new Map();
        answers.set(shapeKey(last), memo.lastAnswer!);
      }
      const key = shapeKey(q);
      c = answers.get(key);
      if (!c) {
        c = this.match(user, q);
        if (answers.size >= MEMO_PER_USER) answers.clear();
        answers.set(key, c);
      }
    }
    memo.last = q;
    memo.lastAnswer = c;
    return c;
  }

  private match(user: UserInfo, q: FlowShape): Classification {
    for (const schema of this.ordered) {
      const level = this.levels.get(schema.level);
      if (!level) continue; // a dangling schema matches nothing, as in kube
      if (!schema.rules.some((r) => ruleMatches(r, user, q))) continue;
      const by = schema.distinguisher === 'ByUser' ? user.username : schema.distinguisher === 'ByNamespace' ? q.namespace : '';
      return { schema, level, flow: `${schema.name}\u0000${by}`, distinguisher: by };
    }
    // kube answers with catch-all when nothing matches (for example a user with no groups).
    const level = this.levels.get('catch-all') ?? this.fallback.level;
    return { ...this.fallback, level };
  }

  private reorder(): void {
    this.ordered = [...this.schemas.values()].sort(byPrecedence);
    this.generation++;
  }

  private levelsChanged(): void {
    this.generation++;
    for (const fn of this.listeners) fn(this.levels);
  }

  /** The ReflectedTypes that keep this classifier current. */
  reflected(): ReflectedType[] {
    return [
      {
        group: GROUP,
        resource: 'flowschemas',
        reset: (items) => {
          this.schemas = new Map(
            items.map((o) => {
              const s = flowSchemaOf(o);
              return [s.name, s];
            }),
          );
          this.reorder();
        },
        set: (o) => {
          const s = flowSchemaOf(o);
          this.schemas.set(s.name, s);
          this.reorder();
        },
        remove: (o) => {
          this.schemas.delete(o.metadata.name ?? '');
          this.reorder();
        },
      },
      {
        group: GROUP,
        resource: 'prioritylevelconfigurations',
        reset: (items) => {
          this.levels.clear();
          for (const o of items) {
            const l = priorityLevelOf(o);
            this.levels.set(l.name, l);
          }
          this.levelsChanged();
        },
        set: (o) => {
          const l = priorityLevelOf(o);
          this.levels.set(l.name, l);
          this.levelsChanged();
        },
        remove: (o) => {
          this.levels.delete(o.metadata.name ?? '');
          this.levelsChanged();
        },
      },
    ];
  }
}

/** A Classifier kept current from the store; `start()` resolves after the first list (retried until it succeeds). */
export class ClassifierSync {
  private readonly reflector: Reflector;
  constructor(
    source: ObjectSource,
    readonly classifier: Classifier,
    log: (msg: string) => void,
  ) {
    this.reflector = new Reflector(source, classifier.reflected(), { who: 'priority and fairness', log, retryFirstList: true });
  }
  start(): Promise<void> {
    return this.reflector.start();
  }
  stop(): void {
    this.reflector.stop();
  }
}
