// The reference of the a2a-send bench as a process of its own (bench/a2a-reference.ts): it listens on a free loopback
// port, prints one JSON line, {"url", "mode", "executor", "store", "storeNote"?}, and stops on SIGTERM, SIGINT or the
// end of its standard input (the bench holds it open). --store database uses the PostgreSQL of DATABASE_URL.
import { parseArgs } from 'node:util';
import { startReference } from './a2a-reference.ts';
import { stopWhenTold } from './child.ts';

const { values } = parseArgs({ options: { mode: { type: 'string', default: 'reply' }, store: { type: 'string', default: 'memory' }, executor: { type: 'string', default: 'trivial' }, 'model-url': { type: 'string' } } });
if ((values.mode !== 'reply' && values.mode !== 'task') || (values.store !== 'memory' && values.store !== 'database') || (values.executor !== 'trivial' && values.executor !== 'model')) {
  process.stderr.write('usage: a2a-reference-server.ts [--mode reply|task] [--store memory|database] [--executor trivial|model] [--model-url URL]  (database: DATABASE_URL)\n');
  process.exit(2);
}
const modelUrl = values['model-url'];
const ref = await startReference({ mode: values.mode, store: values.store, executor: values.executor, ...(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : {}), ...(modelUrl ? { modelUrl } : {}) });
process.stdout.write(`${JSON.stringify({ url: ref.url, mode: values.mode, executor: ref.executor, store: ref.store, ...(ref.storeNote ? { storeNote: ref.storeNote } : {}) })}\n`);
stopWhenTold(() => ref.close());
