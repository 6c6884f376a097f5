// The globs of a plugin's filesystem grants (`fs://data/**`, `fs://out/*.txt`), matched against the workspace-relative
// paths the guest opens. Plain JavaScript: the sandbox threads load it (worker-grants.mjs).
//
// `*` and `?` stay within a segment, `**` crosses them, `**/` also matches no segment at all, and `dir/**` also names
// `dir` itself, so a plugin can open the directory it may use. The glob is the tenant's own text (its platform.yaml,
// up to 500 characters), so it is not compiled to a regular expression: `*a*a*a*a…` against a long path backtracks
// exponentially there. It is run as a small automaton instead, every state at once, in at most
// (path length × glob length) steps.

/**
 * The glob as tokens. `skip` (on the `**` of a `**` + `/`): the token after the slash, reached without consuming
 * anything (the group matches no segment).
 * @param {string} glob
 */
function tokens(glob) {
  const out = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      if (glob[i + 2] === '/') {
        out.push({ kind: 'any', skip: out.length + 2 }, { kind: 'char', c: '/' });
        i += 2;
      } else {
        out.push({ kind: 'any' });
        i += 1;
      }
    } else if (c === '*') out.push({ kind: 'segment' });
    else if (c === '?') out.push({ kind: 'one' });
    else out.push({ kind: 'char', c });
  }
  return out;
}

/**
 * Whether `path` matches all of the tokens.
 * @param {ReturnType<typeof tokens>} toks
 * @param {string} path
 */
function matches(toks, path) {
  const end = toks.length;
  let current = new Uint8Array(end + 1);
  let next = new Uint8Array(end + 1);
  // Adds state i and every state reachable from it without consuming a character. A `**/` group may be skipped only
  // as it is entered: once its `**` has taken a character, the group must end with its slash.
  const add = (set, i, entering) => {
    for (; i <= end; i++, entering = true) {
      const t = toks[i];
      if (entering && t?.skip !== undefined) add(set, t.skip, true);
      if (set[i]) return;
      set[i] = 1;
      if (!t || t.kind === 'char' || t.kind === 'one') return;
    }
  };
  add(current, 0, true);
  for (let p = 0; p < path.length; p++) {
    const c = path[p];
    next.fill(0);
    let any = false;
    for (let i = 0; i < end; i++) {
      if (!current[i]) continue;
      const t = toks[i];
      if (t.kind === 'char' ? c === t.c : t.kind === 'one' ? c !== '/' : false) {
        add(next, i + 1, true);
        any = true;
      } else if (t.kind === 'any' || (t.kind === 'segment' && c !== '/')) {
        // Stays on the wildcard, and may leave it after this character.
        add(next, i, false);
        any = true;
      }
    }
    if (!any) return false;
    [current, next] = [next, current];
  }
  return current[end] === 1;
}

/**
 * A matcher for one grant's glob (already without `fs://` and leading slashes).
 * @param {string} glob
 * @returns {(path: string) => boolean}
 */
export function compileGlob(glob) {
  const whole = tokens(glob);
  const dir = glob.endsWith('/**') ? tokens(glob.slice(0, -3)) : null;
  return (path) => matches(whole, path) || (dir !== null && matches(dir, path));
}
