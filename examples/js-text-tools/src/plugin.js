// The exports of wit/world.wit, in camelCase: extract-links is extractLinks, a record's reading-seconds is
// readingSeconds. What a function returns is the tool's result. None of these throw: an exception in a function
// whose WIT result is not a `result<_, _>` aborts the call (declare `-> result<T, string>` and throw for errors).

const WORDS_PER_MINUTE = 230;

export function stats(text) {
  const words = text.split(/\s+/).filter(Boolean).length;
  return {
    words,
    sentences: text.split(/[.!?]+/).filter((s) => s.trim()).length,
    characters: [...text].length,
    readingSeconds: words === 0 ? 0 : Math.max(1, Math.round((words / WORDS_PER_MINUTE) * 60)),
  };
}

// Latin letters with accents, as the ASCII they are written without: the engine componentize-js builds on has no
// String.prototype.normalize.
const FOLDED = { æ: 'ae', ð: 'd', ø: 'o', ß: 'ss', þ: 'th', œ: 'oe' };
for (const [plain, accented] of Object.entries({ a: 'àáâãäåā', c: 'çćč', e: 'èéêëēěę', i: 'ìíîïī', n: 'ñńň', o: 'òóôõöō', u: 'ùúûüūů', y: 'ýÿ', s: 'śš', z: 'źżž', l: 'ł' })) {
  for (const ch of accented) FOLDED[ch] = plain;
}

export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/[^\x00-\x7f]/g, (ch) => FOLDED[ch] ?? '-')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function extractLinks(text) {
  const links = (text.match(/https?:\/\/[^\s<>"'()\[\]]+/g) ?? []).map((l) => l.replace(/[.,;:!?]+$/, ''));
  return [...new Set(links)];
}
