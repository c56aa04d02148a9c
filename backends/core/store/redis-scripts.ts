// The Lua scripts of the Redis store, each called the same way (runScript):
// EVALSHA of its SHA1, and EVAL of its text when Redis answers NOSCRIPT (a
// restarted or flushed Redis), which caches it again. Each runs atomically in
// Redis: nothing half-written is ever visible to another client.
import { createHash } from 'node:crypto';
import { Command } from 'ioredis';
import type { Cluster, Redis } from 'ioredis';
import type { RedisKeys } from './redis-keys.js';

/**
 * One write. KEYS: rev, last, feed, types, objects hash, index zset (all of one domain;
 * rev and last may be the same key). ARGV: op (c|u|d), key, json ('' for d), expected
 * rev ('' = none), commit time ms, type, floor (the highest revision the caller has
 * seen in any domain; '' = 0).
 * The new revision is max(allocator, floor) + 1: strictly increasing in the domain, and
 * above every revision the caller saw elsewhere (a Lamport clock across domains).
 * Replies {'ok', rev, previous revision of the domain[, old value for d]} | {'exists'} | {'not-found'} | {'conflict', current rev}.
 * The stream entry records the domain's previous revision (p), so readers detect gaps
 * although revisions need not be dense. It is added first: if it fails (bad id, out of
 * memory), nothing else was written.
 */
const WRITE = `
local op, key = ARGV[1], ARGV[2]
local cur = redis.call('HGET', KEYS[5], key)
if op == 'c' then
  if cur then return {'exists'} end
else
  if not cur then return {'not-found'} end
  if ARGV[4] ~= '' then
    local curRev = string.match(cur, '^%d+')
    if curRev ~= ARGV[4] then return {'conflict', curRev} end
  end
end
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[7]) or 0
if floor > n then n = floor end
local rev = string.format('%d', n + 1)
local prev = redis.call('GET', KEYS[2]) or '0'
if op == 'd' then
  redis.call('XADD', KEYS[3], rev .. '-0', 'k', key, 't', ARGV[5], 'p', prev, 'd', '1')
  redis.call('HDEL', KEYS[5], key)
  redis.call('ZREM', KEYS[6], key)
else
  redis.call('XADD', KEYS[3], rev .. '-0', 'k', key, 't', ARGV[5], 'p', prev, 'o', ARGV[3])
  redis.call('HSET', KEYS[5], key, rev .. ' ' .. ARGV[3])
  if not cur then
    redis.call('ZADD', KEYS[6], 0, key)
    redis.call('SADD', KEYS[4], ARGV[6])
  end
end
redis.call('SET', KEYS[1], rev)
if KEYS[2] ~= KEYS[1] then redis.call('SET', KEYS[2], rev) end
if op == 'd' then return {'ok', rev, prev, cur} end
return {'ok', rev, prev}
`;

/**
 * A consistent snapshot of a domain. KEYS: last, types. ARGV: objects stem, index stem.
 * Replies {rev, type1, {k, v, k, v…}, type2, …}, keys in index order. It reads
 * in chunks of 1000 (Lua's unpack limit) but in one script, so atomically.
 */
const SNAPSHOT = `
local out = {redis.call('GET', KEYS[1]) or '0'}
for _, t in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local kv = {}
  local n = redis.call('ZCARD', ARGV[2] .. t)
  for i = 0, n - 1, 1000 do
    local keys = redis.call('ZRANGE', ARGV[2] .. t, i, i + 999)
    local vals = redis.call('HMGET', ARGV[1] .. t, unpack(keys))
    for j = 1, #keys do
      kv[#kv + 1] = keys[j]
      kv[#kv + 1] = vals[j]
    end
  end
  out[#out + 1] = t
  out[#out + 1] = kv
end
return out
`;

/**
 * Raises each of KEYS (revision keys of one domain) to at least ARGV[1]; replies the
 * first key's value. After Redis lost data, revisions a process already handed out must
 * never be reused (rev and last are raised); currentRev() in a cluster raises the
 * allocators (rev only) so that later writes of every type come after it.
 */
const FLOOR = `
local want = tonumber(ARGV[1])
local out = nil
for i, k in ipairs(KEYS) do
  local cur = tonumber(redis.call('GET', k) or '0')
  if cur < want then redis.call('SET', k, ARGV[1]) cur = want end
  if i == 1 then out = cur end
end
return string.format('%d', out)
`;

/**
 * (Cluster) a domain's read point. KEYS: rev, last. ARGV: floor. Raises the allocator
 * to the floor (so every later write of the domain comes after every revision the
 * caller has seen) and replies {allocator, last}.
 */
const POINT = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1]) or 0
if floor > n then
  n = floor
  redis.call('SET', KEYS[1], ARGV[1])
end
return {string.format('%d', n), redis.call('GET', KEYS[2]) or '0'}
`;

export type WriteOp = 'c' | 'u' | 'd';
/** ok: the revision, the domain's revision before it (the feed entry's p), the old value of a delete. */
export type WriteReply = ['ok', number, number, string?] | ['exists'] | ['not-found'] | ['conflict', string];

/** A Lua script and the SHA1 EVALSHA names it by. */
export interface Script {
  readonly lua: string;
  readonly sha: string;
}

function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

export const WRITE_SCRIPT = script(WRITE);
const SNAPSHOT_SCRIPT = script(SNAPSHOT);
const FLOOR_SCRIPT = script(FLOOR);
const POINT_SCRIPT = script(POINT);
export const WRITE_SHA = WRITE_SCRIPT.sha;

/**
 * Runs a script by EVALSHA, sending its text (EVAL) when Redis answers NOSCRIPT.
 * One call path for every script, without defineCommand's per-script command names and the
 * casts they need. Not for speed: bench/micro.ts, 64 writes in flight, 15.0–17.1 µs of client
 * CPU per write here and 15.3–17.8 µs through defineCommand, within this machine's noise.
 */
export function runScript(client: Redis | Cluster, s: Script, keys: readonly string[], args: readonly string[]): Promise<unknown> {
  // A handler on ioredis's promise rather than an async wrapper: one promise per call fewer.
  return client.evalsha(s.sha, keys.length, ...keys, ...args).catch((err: unknown) => {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return client.eval(s.lua, keys.length, ...keys, ...args);
  });
}

/**
 * A snapshot's bound: its reply is every object of the domain (53 MB at 100,000 ConfigMaps), which took
 * 4–7 s to arrive and parse under load (2 cores, load 13–15), past the client's command bound (5 s), and
 * the store could not start. It still needs one, so a Redis that never answers fails the open.
 */
const SNAPSHOT_TIMEOUT_MS = 60_000;

/**
 * runScript with the reply's strings as Buffers and its own bound: ioredis arms a command's timer only
 * when none is armed, so a Command armed here keeps this bound; sent by sendCommand it also bypasses
 * auto-pipelining (whose `callBuffer` loses its command name, ioredis 5.11).
 */
function runScriptBuffer(client: Redis, s: Script, keys: readonly string[], args: readonly string[], timeoutMs: number): Promise<unknown> {
  const send = (name: 'evalsha' | 'eval', head: string): Promise<unknown> => {
    const c = new Command(name, [head, keys.length, ...keys, ...args], { replyEncoding: null });
    c.setTimeout(timeoutMs);
    return client.sendCommand(c) as Promise<unknown>;
  };
  return send('evalsha', s.sha).catch((err: unknown) => {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return send('eval', s.lua);
  });
}

/**
 * Makes sure the next revision is above rev; returns the allocator. With alsoLast (after
 * data loss), the domain's newest revision is raised too, so a rebuilt cache starts there.
 */
export async function raiseFloor(client: Redis, keys: RedisKeys, rev: number, alsoLast = true): Promise<number> {
  const k = alsoLast && keys.last !== keys.rev ? [keys.rev, keys.last] : [keys.rev];
  return Number(await runScript(client, FLOOR_SCRIPT, k, [String(rev)]));
}

/** The domain's allocator (raised to floor) and newest revision. */
export async function readPoint(client: Redis, keys: RedisKeys, floor: number): Promise<{ alloc: number; last: number }> {
  const [alloc, last] = (await runScript(client, POINT_SCRIPT, [keys.rev, keys.last], [String(floor)])) as [string, string];
  return { alloc: Number(alloc), last: Number(last) };
}

/** The write script's KEYS per domain and type, built once (two concatenations and an array per write otherwise). */
const writeKeyCache = new WeakMap<RedisKeys, Map<string, readonly string[]>>();

function writeKeys(keys: RedisKeys, type: string): readonly string[] {
  let byType = writeKeyCache.get(keys);
  if (!byType) writeKeyCache.set(keys, (byType = new Map()));
  let k = byType.get(type);
  if (!k) byType.set(type, (k = [keys.rev, keys.last, keys.feed, keys.types, keys.objectsStem + type, keys.indexStem + type]));
  return k;
}

export async function runWrite(
  client: Redis,
  keys: RedisKeys,
  type: string,
  op: WriteOp,
  key: string,
  json: string,
  expectedRev: number | undefined,
  at: number,
  floor = 0,
): Promise<WriteReply> {
  const reply = (await runScript(client, WRITE_SCRIPT, writeKeys(keys, type), [
    op,
    key,
    json,
    expectedRev === undefined ? '' : String(expectedRev),
    String(at),
    type,
    String(floor),
  ])) as unknown[];
  if (reply[0] === 'ok') return ['ok', Number(reply[1]), Number(reply[2]), reply[3] === undefined ? undefined : String(reply[3])];
  return reply as WriteReply;
}

export interface RawSnapshot {
  rev: number;
  /** Per type: [key, stored value] in key order; each value its own bytes (a view of the reply), the caller's to keep or rewrite. */
  types: Map<string, [string, Buffer][]>;
}

/** The snapshot's reply as Buffers: the values' bytes are kept as the cached objects' list bytes (redis-codec.ts decodeStoredBytes). */
export async function runSnapshot(client: Redis, keys: RedisKeys): Promise<RawSnapshot> {
  const reply = (await runScriptBuffer(client, SNAPSHOT_SCRIPT, [keys.last, keys.types], [keys.objectsStem, keys.indexStem], SNAPSHOT_TIMEOUT_MS)) as unknown[];
  const types = new Map<string, [string, Buffer][]>();
  for (let i = 1; i + 1 < reply.length; i += 2) {
    const flat = reply[i + 1] as Buffer[];
    const rows: [string, Buffer][] = [];
    for (let j = 0; j + 1 < flat.length; j += 2) rows.push([flat[j]!.toString('utf8'), flat[j + 1]!]);
    types.set(String(reply[i]), rows);
  }
  return { rev: Number(String(reply[0])), types };
}
