import type { Bus } from '../core/bus/index.ts';
import { ttlCache } from '../core/cache/index.ts';
import type { Caller } from '../identity/index.ts';
import { builtinNeedsAnchor, onMcpGateway } from './surface-rules.ts';
import type { BindingTarget, ToolEntry, ToolSource } from './tool.ts';

// A built-in family that never appears on an MCP gateway is dropped whatever its source offers.
const onSurface = (target: BindingTarget) => (t: ToolEntry) => target.kind !== 'gateway' || t.origin.kind !== 'builtin' || onMcpGateway(t.origin.family);
// A built-in's need for an anchor is the surface rule's, not its source's say.
const anchoring = (t: ToolEntry): ToolEntry =>
  t.origin.kind === 'builtin' ? { ...t, requiresAnchor: builtinNeedsAnchor(t.origin.family, t.origin.operation) } : t;

// The account is part of the key: ids are global UUIDs, but a cache shared by tenants keys by tenant all the same.
const keyOf = (t: BindingTarget) => `${t.kind}/${t.accountId}/${t.id}`;

/**
 * The tools bound to a gateway or an agent, from every source, less what the surface never shows; and what one
 * caller may see of them. A target's tools are read on every list and call: kept per node for a second, and dropped
 * at once when a source says its tools changed or `invalidate` is called (a binding changed).
 */
export function createToolRegistry(sources: ToolSource[], opts: { bus?: Bus; now?: () => number; cacheMs?: number } = {}) {
  const cache = ttlCache<string, Promise<ToolEntry[]>>(opts.cacheMs ?? 1000, opts.now ?? Date.now);
  for (const subject of new Set(sources.flatMap((s) => s.changedOn ?? []))) opts.bus?.subscribe(subject, () => cache.clear());
  const bound = (target: BindingTarget): Promise<ToolEntry[]> => {
    const key = keyOf(target);
    const hit = cache.get(key);
    if (hit) return hit;
    const loading = Promise.all(sources.map((s) => s.tools(target))).then((lists) => lists.flat().filter(onSurface(target)).map(anchoring));
    loading.catch(() => cache.delete(key));
    return cache.set(key, loading);
  };
  return {
    /** Every bound tool, whoever asks (the presentation mode counts these). */
    bound,
    async visible(target: BindingTarget, caller: Caller | null): Promise<ToolEntry[]> {
      const all = await bound(target);
      return caller === null ? all.filter((t) => !t.requiresAnchor) : all;
    },
    /** Drops what this node cached for a target (its bindings changed). */
    invalidate(target?: BindingTarget) {
      if (target) cache.delete(keyOf(target));
      else cache.clear();
    },
  };
}

export type ToolRegistry = ReturnType<typeof createToolRegistry>;
