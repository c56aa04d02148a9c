// The Lua scripts of the Redis store, registered with ioredis defineCommand
// (EVALSHA with a NOSCRIPT fallback to EVAL). Each runs atomically in Redis:
// nothing half-written is ever visible to another client.
import type { Redis } from 'ioredis';
import type { RedisKeys } from './redis-keys.js';

/**
 * One write. KEYS: rev, feed, types, objects hash, index zset.
 * ARGV: op (c|u|d), key, json ('' for d), expected rev ('' = none), commit time ms, type.
 * Replies {'ok', rev[, old value for d]} | {'exists'} | {'not-found'} | {'conflict', current rev}.
 * The stream entry is added first: if it fails (bad id, out of memory), nothing else was written.
 */
const WRITE = `
local op, key = ARGV[1], ARGV[2]
local cur = redis.call('HGET', KEYS[4], key)
if op == 'c' then
  if cur then return {'exists'} end
else
  if not cur then return {'not-found'} end
  if ARGV[4] ~= '' then
    local curRev = string.match(cur, '^%d+')
    if curRev ~= ARGV[4] then return {'conflict', curRev} end
  end
end
local rev = string.format('%d', tonumber(redis.call('GET', KEYS[1]) or '0') + 1)
if op == 'd' then
  redis.call('XADD', KEYS[2], rev .. '-0', 'k', key, 't', ARGV[5], 'd', '1')
  redis.call('HDEL', KEYS[4], key)
  redis.call('ZREM', KEYS[5], key)
else
  redis.call('XADD', KEYS[2], rev .. '-0', 'k', key, 't', ARGV[5], 'o', ARGV[3])
  redis.call('HSET', KEYS[4], key, rev .. ' ' .. ARGV[3])
  if not cur then
    redis.call('ZADD', KEYS[5], 0, key)
    redis.call('SADD', KEYS[3], ARGV[6])
  end
end
redis.call('SET', KEYS[1], rev)
if op == 'd' then return {'ok', rev, cur} end
return {'ok', rev}
`;

/**
 * A consistent snapshot. KEYS: rev, types. ARGV: objects stem, index stem.
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
 * Raises the revision counter to at least ARGV[1] (KEYS: rev). After Redis
 * lost data, revisions a process already handed out must never be reused.
 */
const FLOOR = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) return tonumber(ARGV[1]) end
return cur
`;

export type WriteOp = 'c' | 'u' | 'd';
export type WriteReply = ['ok', number, string?] | ['exists'] | ['not-found'] | ['conflict', string];

interface ScriptClient {
  ghWrite(...args: string[]): Promise<unknown[]>;
  ghSnapshot(...args: string[]): Promise<unknown[]>;
  ghFloor(...args: string[]): Promise<number>;
}

export function defineScripts(client: Redis): void {
  client.defineCommand('ghWrite', { numberOfKeys: 5, lua: WRITE });
  client.defineCommand('ghSnapshot', { numberOfKeys: 2, lua: SNAPSHOT });
  client.defineCommand('ghFloor', { numberOfKeys: 1, lua: FLOOR });
}

/** Makes sure the next revision is above rev; returns the counter. */
export async function raiseFloor(client: Redis, keys: RedisKeys, rev: number): Promise<number> {
  return Number(await (client as unknown as ScriptClient).ghFloor(keys.rev, String(rev)));
}

export async function runWrite(
  client: Redis, keys: RedisKeys, type: string,
  op: WriteOp, key: string, json: string, expectedRev: number | undefined, at: number,
): Promise<WriteReply> {
  const reply = await (client as unknown as ScriptClient).ghWrite(
    keys.rev, keys.feed, keys.types, keys.objectsStem + type, keys.indexStem + type,
    op, key, json, expectedRev === undefined ? '' : String(expectedRev), String(at), type,
  );
  if (reply[0] === 'ok') return ['ok', Number(reply[1]), reply[2] === undefined ? undefined : String(reply[2])];
  return reply as WriteReply;
}

export interface RawSnapshot {
  rev: number;
  /** Per type: [key, stored value] in key order. */
  types: Map<string, [string, string][]>;
}

export async function runSnapshot(client: Redis, keys: RedisKeys): Promise<RawSnapshot> {
  const reply = await (client as unknown as ScriptClient).ghSnapshot(keys.rev, keys.types, keys.objectsStem, keys.indexStem);
  const types = new Map<string, [string, string][]>();
  for (let i = 1; i + 1 < reply.length; i += 2) {
    const flat = reply[i + 1] as string[];
    const rows: [string, string][] = [];
    for (let j = 0; j + 1 < flat.length; j += 2) rows.push([flat[j]!, flat[j + 1]!]);
    types.set(String(reply[i]), rows);
  }
  return { rev: Number(reply[0]), types };
}
