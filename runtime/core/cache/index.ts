/**
 * A small per-node cache of values read on every request (credentials, sessions, tool lists): each entry lives at
 * most `ttlMs`, so a change made where no invalidation reaches (another process on the same database) is seen
 * within that bound; invalidations over the bus make changes made through a node visible at once.
 */
export function ttlCache<K, V>(ttlMs: number, now: () => number, maxEntries = 10_000) {
  const entries = new Map<K, { value: V; until: number }>();
  return {
    get(key: K): V | undefined {
      const e = entries.get(key);
      if (!e) return undefined;
      if (e.until <= now()) {
        entries.delete(key);
        return undefined;
      }
      return e.value;
    },
    set(key: K, value: V, untilAtMost?: number): V {
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as K);
      entries.set(key, { value, until: Math.min(now() + ttlMs, untilAtMost ?? Infinity) });
      return value;
    },
    delete: (key: K) => entries.delete(key),
    clear: () => entries.clear(),
  };
}
