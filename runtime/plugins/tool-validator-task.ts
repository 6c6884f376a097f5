/**
 * The task-pool side of a plugin tool's argument check: Ajv compiles the tool's input schema (built from its WIT at
 * admission, up to 10,000 schema nodes) into standalone validator source here, off the node's thread. A 4,000-field
 * record took the node's loop 800 ms when Ajv compiled it there at the tool's first call; the node only evaluates the
 * source (tool-validators.ts). Runs in worker threads: it imports nothing of the runtime.
 */
import { Ajv } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';

/**
 * The CommonJS source of a validator of `schema` (it requires only Ajv's runtime helpers). An Ajv of its own each
 * time: one kept across compiles keeps every schema and validator it made (`removeSchema` clears only its cache), and
 * a worker compiles the schemas of many tenants' plugins over its life. The markers tool-schema.ts puts on 64-bit
 * integers are formats that always pass (the bounds are in minimum/maximum), so the source needs no format code.
 */
export function validatorSource(schema: object): string {
  const ajv = new Ajv({ strict: false, allErrors: true, code: { source: true } }).addFormat('int64', true).addFormat('uint64', true);
  // `default`: the CommonJS module.exports as ESM sees it also carries itself as `default`, which its types name.
  return standalone.default(ajv, ajv.compile(schema));
}
