/**
 * Doc comments of the archive's WIT, by function: `pkg:name/interface#func` for a function in an interface, and the
 * bare `func` for world-level functions (and as a fallback). `///` lines directly above a function declaration form
 * its description. Component binaries built with componentEmbed keep no docs, so the shipped .wit is the source.
 */
export function witDocs(sources: string[]): Map<string, string> {
  const docs = new Map<string, string>();
  for (const src of sources) {
    let pkg: string | null = null;
    let iface: string | null = null;
    let depth = 0;
    let ifaceDepth = -1;
    let pending: string[] = [];
    // Line by line, each expression anchored to its line: linear in the text, however it is laid out (a multiline
    // `^\s*package` over thousands of blank lines was quadratic and held the node for seconds).
    for (const raw of src.split('\n')) {
      const line = raw.trim();
      if (pkg === null && line.startsWith('package ')) pkg = /^package\s+([a-z0-9-]+:[a-z0-9-]+)(?:@[^;\s]+)?\s*;/.exec(line)?.[1] ?? null;
      const doc = /^\/\/\/\s?(.*)$/.exec(line);
      if (doc) {
        pending.push(doc[1]!);
        continue;
      }
      const open = /^interface\s+([a-z0-9-]+)\s*\{/.exec(line);
      if (open) {
        iface = open[1]!;
        ifaceDepth = depth;
      }
      const fn = /^(?:export\s+)?([a-z0-9-]+)\s*:\s*(?:async\s+)?func\b/.exec(line);
      if (fn && pending.length) {
        const text = pending.join(' ').trim();
        if (iface && pkg) docs.set(`${pkg}/${iface}#${fn[1]}`, text);
        if (!docs.has(fn[1]!)) docs.set(fn[1]!, text);
      }
      if (!line.startsWith('//')) pending = [];
      depth += (line.match(/\{/g)?.length ?? 0) - (line.match(/\}/g)?.length ?? 0);
      if (iface && depth <= ifaceDepth) {
        iface = null;
        ifaceDepth = -1;
      }
    }
  }
  return docs;
}
