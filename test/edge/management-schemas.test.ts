import { describe, expect, it } from 'vitest';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { createValidatorCompiler } from '../../edge/management/validation.ts';

/** The validator the management app would build for a route's schema of `httpPart`, called once (it compiles lazily). */
function validatorFor(schema: unknown, httpPart: 'body' | 'querystring' = 'body') {
  const compiler: FastifySchemaCompiler<unknown> = createValidatorCompiler();
  return compiler({ schema: schema as FastifySchema, httpPart, method: 'POST', url: '/test' }) as (data: unknown) => boolean;
}

describe('the management routes\' validators, without the meta-schema check', () => {
  it('still refuse a wrong schema when it compiles: unknown keywords, wrong keyword values, unknown types, bad patterns', () => {
    const wrong: [unknown, RegExp][] = [
      [{ type: 'object', properties: { limit: { tpye: 'integer' } } }, /unknown keyword: "tpye"/],
      [{ type: 'string', minLength: 'x' }, /minLength value must be/],
      [{ type: 'strin' }, /type must be JSONType/],
      [{ type: 'object', required: 'name' }, /required value must be/],
      [{ type: 'string', pattern: '(' }, /Invalid regular expression/],
    ];
    for (const [schema, message] of wrong) expect(() => validatorFor(schema)({}), JSON.stringify(schema)).toThrow(message);
  });

  it('validate as before: query strings coerced to their types, bodies as sent, closed objects trimmed', () => {
    const query = { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100 } }, additionalProperties: false };
    const q: Record<string, unknown> = { limit: '20', extra: 'x' };
    expect(validatorFor(query, 'querystring')(q)).toBe(true);
    expect(q).toEqual({ limit: 20 });
    expect(validatorFor(query, 'querystring')({ limit: '101' })).toBe(false);
    const body = { type: 'object', properties: { client_id: { type: 'string', format: 'uuid' } }, required: ['client_id'] };
    expect(validatorFor(body)({ client_id: 42 })).toBe(false);
    expect(validatorFor(body)({ client_id: 'not-a-uuid' })).toBe(false);
    expect(validatorFor(body)({ client_id: '6f1c1f3e-8a77-4d0e-9d7e-3a3c1b1f0a11' })).toBe(true);
  });
});
