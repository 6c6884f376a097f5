import { readFileSync } from 'node:fs';

/** What every command shares, told under each command's help. */
const FOOTER = `
Every command takes --help. Commands that call a node find it by itself: --api-url URL, else PLATFORM_API_URL,
else the node your login was made with, else the node running on this machine's data directory (PLATFORM_DATA_DIR).
--json prints one JSON document on standard output. Exit codes: 0 done, 1 failed (the reason on standard error),
2 a usage mistake (an unknown command or option, a missing argument).`;

/**
 * The usage text split into entries: a line starting with `  platform ` starts one, and the indented lines under it
 * (a long description) belong to it.
 */
function entries(usage: string): { words: string[]; text: string }[] {
  const out: { words: string[]; text: string }[] = [];
  for (const line of usage.split('\n')) {
    const m = /^ {2}platform ((?:[a-z][a-z0-9-]*)(?: [a-z][a-z0-9-]*)*)/.exec(line);
    if (m) out.push({ words: m[1]!.split(' '), text: line });
    else if (out.length && line.trim() !== '' && /^\s/.test(line)) out[out.length - 1]!.text += `\n${line}`;
  }
  return out;
}

/**
 * Help for `platform <words…> --help`: the usage entries of the longest prefix of the words that names some (so
 * `platform admin gateway bind --help` shows that command, `platform admin gateway --help` every gateway command).
 * Null when not even the first word is a command.
 */
export function helpFor(usage: string, words: readonly string[]): string | null {
  const all = entries(usage);
  for (let n = Math.min(words.length, 3); n >= 1; n--) {
    const prefix = words.slice(0, n);
    const hits = all.filter((e) => prefix.every((w, i) => e.words[i] === w));
    if (hits.length) return `usage:\n${hits.map((e) => e.text).join('\n')}\n${FOOTER}\n`;
  }
  return null;
}

/** `platform --version`: the platform's version and the Node that runs it. */
export function versionText(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
  return `platform ${pkg.version} (${pkg.name}) on Node ${process.versions.node}\n`;
}
