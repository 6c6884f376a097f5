/**
 * Rendezvous (highest-random-weight) hashing: every node computes the same owner for a shard from the same member
 * list, and a join or leave moves only the shards whose winner changed (about 1/N of them).
 */
export function rendezvousOwner(shard: number, members: readonly string[]): string | null {
  let best: string | null = null;
  let bestScore = -1;
  for (const m of members) {
    const score = weight(`${shard}:${m}`);
    if (score > bestScore || (score === bestScore && best !== null && m < best)) {
      best = m;
      bestScore = score;
    }
  }
  return best;
}

// 32-bit FNV-1a followed by a murmur3 finalizer: FNV alone mixes the last characters poorly.
function weight(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
