/**
 * Reads the type information of a WebAssembly component binary (Component Model binary format): every import with
 * its sort, and every exported function with its full structural type, including the functions of exported
 * interfaces (jco's componentWit prints only the root world). Core sections are skipped by length. Anything this
 * reader does not understand fails closed with ComponentFormatError.
 */
export type ValType =
  | string // primitive: bool, s8..u64, f32, f64, char, string, error-context
  | { record: [string, ValType][] }
  | { variant: [string, ValType | null][] }
  | { list: ValType; length?: number }
  | { tuple: ValType[] }
  | { flags: string[] }
  | { enum: string[] }
  | { option: ValType }
  | { result: { ok: ValType | null; err: ValType | null } }
  | { resource: 'own' | 'borrow' | 'type' }
  | { stream: ValType | null }
  | { future: ValType | null };

export interface FuncType {
  params: [string, ValType][];
  result: ValType | null;
}

type Extern =
  | { sort: 'func'; type: FuncType }
  | { sort: 'type'; type: Def }
  | { sort: 'instance'; exports: Map<string, Extern> }
  | { sort: 'component'; exports: Map<string, Extern> }
  | { sort: 'value' | 'module' | 'core' };

type Def = ValType | { func: FuncType } | { instance: Map<string, Extern> } | { component: Map<string, Extern> };

export interface ComponentInfo {
  imports: { name: string; sort: string }[];
  /** Exported functions: `name` for a root-world function, `interface#name` for one of an exported interface. */
  functions: { name: string; interface: string | null; func: string; type: FuncType }[];
}

export class ComponentFormatError extends Error {
  override readonly name = 'ComponentFormatError';
}

const PRIMITIVES: Record<number, string> = {
  0x7f: 'bool', 0x7e: 's8', 0x7d: 'u8', 0x7c: 's16', 0x7b: 'u16', 0x7a: 's32', 0x79: 'u32', 0x78: 's64',
  0x77: 'u64', 0x76: 'f32', 0x75: 'f64', 0x74: 'char', 0x73: 'string', 0x64: 'error-context',
};
const SORTS = ['core', 'func', 'value', 'type', 'component', 'instance'] as const;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

class Reader {
  constructor(
    readonly buf: Uint8Array,
    public pos = 0,
    readonly end = buf.length,
  ) {}
  byte(): number {
    if (this.pos >= this.end) throw new ComponentFormatError('unexpected end of the component binary');
    return this.buf[this.pos++]!;
  }
  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) throw new ComponentFormatError('malformed LEB128 integer');
    }
  }
  /** A signed 33-bit LEB: negative values are primitive value types, the rest type indices. */
  s33(): number {
    let result = 0;
    let shift = 0;
    let b: number;
    do {
      b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 40 && b & 0x40) result -= 2 ** shift;
    return result;
  }
  string(): string {
    const len = this.u32();
    if (this.pos + len > this.end) throw new ComponentFormatError('string runs past the end');
    let s: string;
    try {
      s = UTF8.decode(this.buf.subarray(this.pos, this.pos + len));
    } catch {
      throw new ComponentFormatError(`a name at byte ${this.pos} is not valid UTF-8`);
    }
    // Names become tool names, schema keys and database text: NUL has no place in any of them.
    if (s.includes('\0')) throw new ComponentFormatError(`a name at byte ${this.pos} holds a NUL character`);
    this.pos += len;
    return s;
  }
  vec<T>(item: () => T): T[] {
    const n = this.u32();
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(item());
    return out;
  }
}

/** One index space scope: a component, or an instance/component type declaration. */
class Scope {
  types: Def[] = [];
  funcs: FuncType[] = [];
  instances: Map<string, Extern>[] = [];
  components: Map<string, Extern>[] = [];
  readonly depth: number;
  constructor(readonly parent: Scope | null) {
    this.depth = parent ? parent.depth + 1 : 0;
  }
  type(i: number): Def {
    const t = this.types[i];
    if (t === undefined) throw new ComponentFormatError(`type index ${i} out of range`);
    return t;
  }
  outer(count: number): Scope {
    let s: Scope = this;
    for (let i = 0; i < count; i++) {
      if (!s.parent) throw new ComponentFormatError('outer alias past the root');
      s = s.parent;
    }
    return s;
  }
  add(e: Extern) {
    if (e.sort === 'func') this.funcs.push(e.type);
    else if (e.sort === 'type') this.types.push(e.type);
    else if (e.sort === 'instance') this.instances.push(e.exports);
    else if (e.sort === 'component') this.components.push(e.exports);
  }
  get(sort: (typeof SORTS)[number], idx: number): Extern {
    const miss = () => new ComponentFormatError(`${sort} index ${idx} out of range`);
    if (sort === 'func') return { sort, type: this.funcs[idx] ?? (() => { throw miss(); })() };
    if (sort === 'type') return { sort, type: this.type(idx) };
    if (sort === 'instance') return { sort, exports: this.instances[idx] ?? (() => { throw miss(); })() };
    if (sort === 'component') return { sort, exports: this.components[idx] ?? (() => { throw miss(); })() };
    return { sort: sort === 'core' ? 'core' : 'value' };
  }
}

function valtype(r: Reader, scope: Scope): ValType {
  const v = r.s33();
  if (v < 0) {
    const prim = PRIMITIVES[v + 0x80];
    if (!prim) throw new ComponentFormatError(`unknown primitive value type ${v}`);
    return prim;
  }
  const t = scope.type(v);
  if (typeof t === 'object' && ('func' in t || 'instance' in t || 'component' in t)) throw new ComponentFormatError('a value type names a non-value type');
  return t as ValType;
}

const optional = <T>(r: Reader, f: () => T): T | null => {
  const tag = r.byte();
  if (tag === 0x00) return null;
  if (tag === 0x01) return f();
  throw new ComponentFormatError(`bad option tag ${tag}`);
};

function deftype(r: Reader, scope: Scope): Def {
  const tag = r.byte();
  const vt = () => valtype(r, scope);
  switch (tag) {
    case 0x40: {
      const params = r.vec(() => [r.string(), vt()] as [string, ValType]);
      const rt = r.byte();
      let result: ValType | null = null;
      if (rt === 0x00) result = vt();
      else if (rt === 0x01 && r.u32() !== 0) throw new ComponentFormatError('named multiple results are not supported');
      else if (rt !== 0x01) throw new ComponentFormatError(`bad result list tag ${rt}`);
      return { func: { params, result } };
    }
    case 0x41:
      return { component: declarations(r, scope, true) };
    case 0x42:
      return { instance: declarations(r, scope, false) };
    case 0x3f:
    case 0x3e: {
      r.byte(); // rep: i32
      if (tag === 0x3e) r.u32();
      optional(r, () => r.u32());
      return { resource: 'type' };
    }
    case 0x72:
      return { record: r.vec(() => [r.string(), vt()] as [string, ValType]) };
    case 0x71:
      return {
        variant: r.vec(() => {
          const name = r.string();
          const t = optional(r, vt);
          if (r.byte() !== 0x00) throw new ComponentFormatError('variant case refinements are not supported');
          return [name, t] as [string, ValType | null];
        }),
      };
    case 0x70:
      return { list: vt() };
    case 0x67:
      return { list: vt(), length: r.u32() };
    case 0x6f:
      return { tuple: r.vec(vt) };
    case 0x6e:
      return { flags: r.vec(() => r.string()) };
    case 0x6d:
      return { enum: r.vec(() => r.string()) };
    case 0x6b:
      return { option: vt() };
    case 0x6a:
      return { result: { ok: optional(r, vt), err: optional(r, vt) } };
    case 0x69:
      r.u32();
      return { resource: 'own' };
    case 0x68:
      r.u32();
      return { resource: 'borrow' };
    case 0x66:
      return { stream: optional(r, vt) };
    case 0x65:
      return { future: optional(r, vt) };
    default: {
      const prim = PRIMITIVES[tag];
      if (prim) return prim;
      throw new ComponentFormatError(`unknown type constructor 0x${tag.toString(16)}`);
    }
  }
}

function externName(r: Reader): string {
  const tag = r.byte();
  const name = r.string();
  if (tag === 0x01) r.string(); // version suffix
  else if (tag !== 0x00) throw new ComponentFormatError(`bad extern name tag ${tag}`);
  return name;
}

function sort(r: Reader): (typeof SORTS)[number] {
  const b = r.byte();
  if (b === 0x00) {
    r.byte(); // core sort
    return 'core';
  }
  const s = SORTS[b];
  if (!s) throw new ComponentFormatError(`unknown sort ${b}`);
  return s;
}

function externdesc(r: Reader, scope: Scope): Extern {
  const tag = r.byte();
  if (tag === 0x00) {
    r.byte();
    r.u32();
    return { sort: 'module' };
  }
  if (tag === 0x01) {
    const t = scope.type(r.u32());
    if (typeof t !== 'object' || !('func' in t)) throw new ComponentFormatError('a func import names a non-func type');
    return { sort: 'func', type: t.func };
  }
  if (tag === 0x02) {
    if (r.byte() === 0x00) r.u32();
    else valtype(r, scope);
    return { sort: 'value' };
  }
  if (tag === 0x03) {
    const bound = r.byte();
    return { sort: 'type', type: bound === 0x00 ? scope.type(r.u32()) : { resource: 'type' } };
  }
  if (tag === 0x04 || tag === 0x05) {
    const t = scope.type(r.u32());
    const exports = typeof t === 'object' ? ('instance' in t ? t.instance : 'component' in t ? t.component : null) : null;
    if (!exports) throw new ComponentFormatError('an instance or component import names another kind of type');
    return tag === 0x05 ? { sort: 'instance', exports } : { sort: 'component', exports };
  }
  throw new ComponentFormatError(`unknown extern descriptor ${tag}`);
}

function alias(r: Reader, scope: Scope): Extern {
  const s = sort(r);
  const target = r.byte();
  if (target === 0x00) {
    const inst = scope.get('instance', r.u32());
    const name = r.string();
    const e = inst.sort === 'instance' ? inst.exports.get(name) : undefined;
    if (!e) throw new ComponentFormatError(`alias of missing export ${name}`);
    return e;
  }
  if (target === 0x01) {
    r.u32();
    r.string();
    return { sort: 'core' };
  }
  if (target === 0x02) {
    const count = r.u32();
    return scope.outer(count).get(s, r.u32());
  }
  throw new ComponentFormatError(`unknown alias target ${target}`);
}

/** The declarations of an instance or component type: their own scope, and the exports they declare. */
function declarations(r: Reader, parent: Scope, component: boolean): Map<string, Extern> {
  const scope = new Scope(parent);
  const exports = new Map<string, Extern>();
  const n = r.u32();
  for (let i = 0; i < n; i++) {
    const tag = r.byte();
    if (tag === 0x00) throw new ComponentFormatError('core types inside type declarations are not supported');
    else if (tag === 0x01) scope.types.push(deftype(r, scope));
    else if (tag === 0x02) scope.add(alias(r, scope));
    else if (tag === 0x03 && component) {
      externName(r);
      scope.add(externdesc(r, scope));
    } else if (tag === 0x04) {
      const name = externName(r);
      const e = externdesc(r, scope);
      scope.add(e);
      exports.set(name, e);
    } else throw new ComponentFormatError(`unknown declaration ${tag}`);
  }
  return exports;
}

const CANON_WITH_OPTS = new Set([0x00, 0x01]);

function canon(r: Reader, scope: Scope) {
  const op = r.byte();
  if (CANON_WITH_OPTS.has(op)) {
    r.byte(); // 0x00
    r.u32(); // func index
    r.vec(() => {
      const o = r.byte();
      if ([0x03, 0x04, 0x05, 0x07].includes(o)) r.u32();
      else if (![0x00, 0x01, 0x02, 0x06].includes(o)) throw new ComponentFormatError(`unknown canonical option ${o}`);
    });
    if (op === 0x00) {
      const t = scope.type(r.u32());
      if (typeof t !== 'object' || !('func' in t)) throw new ComponentFormatError('canon lift names a non-func type');
      scope.funcs.push(t.func);
    }
    return;
  }
  // resource.new / resource.drop / resource.rep make core functions; nothing of the component's surface.
  if (op === 0x02 || op === 0x03 || op === 0x04 || op === 0x07) return void r.u32();
  throw new ComponentFormatError(`unsupported canonical function 0x${op.toString(16)}`);
}

function instance(r: Reader, scope: Scope): Map<string, Extern> {
  const tag = r.byte();
  if (tag === 0x00) {
    const c = scope.get('component', r.u32());
    r.vec(() => {
      r.string();
      sort(r);
      r.u32();
    });
    return c.sort === 'component' ? c.exports : new Map();
  }
  if (tag === 0x01) {
    const exports = new Map<string, Extern>();
    r.vec(() => {
      const name = externName(r);
      const s = sort(r);
      exports.set(name, scope.get(s, r.u32()));
    });
    return exports;
  }
  throw new ComponentFormatError(`unknown instance expression ${tag}`);
}

function component(r: Reader, parent: Scope | null, imports: ComponentInfo['imports'] | null): Map<string, Extern> {
  const scope = new Scope(parent);
  const exports = new Map<string, Extern>();
  while (r.pos < r.end) {
    const id = r.byte();
    const size = r.u32();
    const end = r.pos + size;
    if (end > r.end) throw new ComponentFormatError('a section runs past the end of the component');
    const s = new Reader(r.buf, r.pos, end);
    switch (id) {
      case 0: // custom
      case 1: // core module
      case 2: // core instance
      case 3: // core type
        break;
      case 4: {
        if (scope.depth >= MAX_COMPONENT_NESTING) throw new ComponentFormatError(`components nest deeper than ${MAX_COMPONENT_NESTING} levels`);
        const nested = new Reader(r.buf, r.pos, end);
        preamble(nested);
        scope.components.push(component(nested, scope, null));
        break;
      }
      case 5:
        s.vec(() => scope.instances.push(instance(s, scope)));
        break;
      case 6:
        s.vec(() => scope.add(alias(s, scope)));
        break;
      case 7:
        s.vec(() => scope.types.push(deftype(s, scope)));
        break;
      case 8:
        s.vec(() => canon(s, scope));
        break;
      case 10:
        s.vec(() => {
          const name = externName(s);
          const e = externdesc(s, scope);
          scope.add(e);
          imports?.push({ name, sort: e.sort });
        });
        break;
      case 11:
        s.vec(() => {
          const name = externName(s);
          const k = sort(s);
          let e = scope.get(k, s.u32());
          const ascribed = optional(s, () => externdesc(s, scope));
          if (ascribed && ascribed.sort === e.sort) e = ascribed;
          scope.add(e);
          exports.set(name, e);
        });
        break;
      default:
        throw new ComponentFormatError(`unsupported component section ${id}`);
    }
    r.pos = end;
  }
  return exports;
}

export type BinaryKind = 'component' | 'core-module' | 'unknown';

export function binaryKind(bytes: Uint8Array): BinaryKind {
  if (bytes.length < 8 || bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) return 'unknown';
  if (bytes[4] === 0x01 && bytes[5] === 0x00 && bytes[6] === 0x00 && bytes[7] === 0x00) return 'core-module';
  if (bytes[6] === 0x01 && bytes[7] === 0x00) return 'component';
  return 'unknown';
}

function preamble(r: Reader) {
  if (binaryKind(r.buf.subarray(r.pos, r.pos + 8)) !== 'component') throw new ComponentFormatError('not a WebAssembly component');
  r.pos += 8;
}

/** Components nested in components, at most: toolchains nest one or two levels. */
export const MAX_COMPONENT_NESTING = 32;

export function reflectComponent(bytes: Uint8Array): ComponentInfo {
  const r = new Reader(bytes);
  preamble(r);
  const imports: ComponentInfo['imports'] = [];
  let exports: Map<string, Extern>;
  try {
    exports = component(r, null, imports);
  } catch (err) {
    // Types can nest too (instance types in component types, and so on): past the stack, it is refused, not a crash.
    if (err instanceof RangeError) throw new ComponentFormatError('the component nests too deeply to read');
    throw err;
  }
  const functions: ComponentInfo['functions'] = [];
  for (const [name, e] of exports) {
    if (e.sort === 'func') functions.push({ name, interface: null, func: name, type: e.type });
    if (e.sort === 'instance') {
      for (const [fname, fe] of e.exports) if (fe.sort === 'func') functions.push({ name: `${name}#${fname}`, interface: name, func: fname, type: fe.type });
    }
  }
  return { imports, functions };
}
