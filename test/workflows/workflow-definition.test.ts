import { describe, expect, it } from 'vitest';
import { checkInput, checkWorkflow, parseWorkflow, WORKFLOW_LIMITS } from '../../runtime/index.ts';

const ok = { name: 'w', description: 'd', start: 'a', steps: { a: { type: 'succeed' } } };
const why = (def: unknown) => {
  try {
    checkWorkflow(def);
    return null;
  } catch (err) {
    return (err as { code: string; message: string }).code + ': ' + (err as Error).message;
  }
};

/** Workflow definitions are checked before the operator's put lands (docs/workflows.md). */
describe('workflow definitions', () => {
  it('[SURF-13] names what is wrong: unknown steps, fields, types, references, limits', () => {
    expect(why(ok)).toBeNull();
    expect(why({ ...ok, start: 'b' })).toBe('WORKFLOW_INVALID: start: names no step of this workflow');
    expect(why({ ...ok, steps: { a: { type: 'tool', tool: 'x', next: 'nowhere' } } })).toBe('WORKFLOW_INVALID: steps.a.next: names no step of this workflow');
    expect(why({ ...ok, steps: { a: { type: 'dance' } } })).toBe('WORKFLOW_INVALID: steps.a.type: one of tool, approval, signal, timer, branch, succeed, fail');
    expect(why({ ...ok, steps: { a: { type: 'succeed', extra: 1 } } })).toBe('WORKFLOW_INVALID: steps.a: a succeed step has no extra');
    expect(why({ ...ok, steps: { a: { type: 'timer', seconds: 0, next: 'a' } } })).toMatch(/steps\.a\.seconds: 1 to 604800/);
    expect(why({ ...ok, steps: { a: { type: 'timer', seconds: WORKFLOW_LIMITS.timerSeconds, next: 'a' } } })).toBeNull();
    expect(why({ ...ok, steps: { a: { type: 'signal', signal: 's', next: 'a', on_timeout: 'a' } } })).toBe('WORKFLOW_INVALID: steps.a.on_timeout: needs timeout_seconds');
    expect(why({ ...ok, steps: { a: { type: 'branch', cases: [{ when: { path: 'x', op: 'like' }, next: 'a' }], default: 'a' } } })).toMatch(/cases\.0\.when: a path and an op/);
    expect(why({ ...ok, name: 'Bad Name' })).toMatch(/^WORKFLOW_INVALID: name:/);
    expect(why({ ...ok, input: { type: 'nonsense' } })).toMatch(/^WORKFLOW_INVALID: input: not a JSON Schema/);
    // A tenant's regular expression would run over callers' text on the node's thread: refused anywhere in the schema.
    expect(why({ ...ok, input: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } })).toBe(
      "WORKFLOW_INVALID: input.properties.s.pattern: regular expressions are not allowed in a workflow's input schema (use enum, const, minLength and maxLength)",
    );
    expect(why({ ...ok, input: { type: 'object', properties: { pattern: { type: 'string' } } } })).toBeNull();
    expect(why({ ...ok, input: { type: 'object', patternProperties: { x: {} } } })).toMatch(/input\.patternProperties: regular expressions are not allowed/);
    // Compiled on the node's thread: 64 schemas in all (the input's own and 63 properties), not 65.
    const fields = (n: number) => ({ type: 'object', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string', maxLength: 10 }])) });
    expect(why({ ...ok, input: fields(63) })).toBeNull();
    expect(why({ ...ok, input: fields(64) })).toBe("WORKFLOW_INVALID: input: at most 64 schemas in all (the input's own, each property's and item's)");
    expect(why({ ...ok, input: { type: 'array', items: fields(63) } })).toBe("WORKFLOW_INVALID: input: at most 64 schemas in all (the input's own, each property's and item's)");
    const steps = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, { type: 'succeed' }]));
    expect(why({ ...ok, start: 's0', steps: steps(100) })).toBeNull();
    expect(why({ ...ok, start: 's0', steps: steps(101) })).toBe('WORKFLOW_INVALID: steps: 1 to 100 steps');
    expect(() => parseWorkflow(' '.repeat(WORKFLOW_LIMITS.definitionBytes + 1))).toThrow(/at most 65536 bytes/);
    // A definition given as a value (the workflow_save tool) holds the same size: at 64 KiB of JSON it is read, past it refused.
    const sized = (bytes: number) => ({ ...ok, description: 'd'.repeat(bytes - JSON.stringify({ ...ok, description: '' }).length) });
    expect(why(sized(WORKFLOW_LIMITS.definitionBytes))).toMatch(/description: text of at most 1024/);
    expect(why(sized(WORKFLOW_LIMITS.definitionBytes + 1))).toBe('WORKFLOW_INVALID: a workflow definition is at most 65536 bytes of JSON');
    expect(() => parseWorkflow('{nope')).toThrow(/not JSON/);
  });

  it('[SURF-13] checks a run input against the input schema and its size', () => {
    const w = checkWorkflow({ ...ok, input: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } });
    expect(() => checkInput(w, { n: 1 })).not.toThrow();
    expect(() => checkInput(w, { n: 'x' })).toThrow('input.n must be number');
    expect(() => checkInput(w, {})).toThrow("input must have required property 'n'");
    expect(() => checkInput(checkWorkflow(ok), 'x'.repeat(WORKFLOW_LIMITS.inputBytes))).toThrow(/at most 65536 bytes/);
  });
});
