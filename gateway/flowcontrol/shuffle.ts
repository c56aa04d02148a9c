// Shuffle sharding, as kube's k8s.io/apiserver/pkg/util/shufflesharding: a
// flow's hash deals it a hand of `handSize` distinct queues out of `deck`, so
// that two heavy flows rarely share all their queues and a light flow almost
// always has one queue no heavy flow uses.
import { createHash } from 'node:crypto';

/** 64 bits of the flow's SHA-256: the entropy the deal draws on (validation keeps a hand within 60 bits). */
export function flowHash(flow: string): bigint {
  return createHash('sha256').update(flow).digest().readBigUInt64BE(0);
}

/** The hand: each card a remainder of the hash, taken as a rank among the cards not yet dealt. */
export function dealHand(hash: bigint, deck: number, handSize: number): number[] {
  const hand: number[] = [];
  let h = hash;
  for (let i = 0; i < handSize && i < deck; i++) {
    const left = BigInt(deck - i);
    let card = Number(h % left);
    h /= left;
    for (const dealt of [...hand].sort((a, b) => a - b)) if (card >= dealt) card++;
    hand.push(card);
  }
  return hand;
}
