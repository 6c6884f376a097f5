// The reference for actor-ask: a bare NATS responder in its own process, answering like an actor would.
import { connect } from '@nats-io/transport-node';

const [url, subject] = process.argv.slice(2) as [string, string];
const nc = await connect({ servers: url });
const enc = new TextEncoder();
nc.subscribe(subject, {
  callback: (_err, msg) => void msg.respond(enc.encode(JSON.stringify({ ok: true, data: { status: 'active', value: { budget: 'funded' }, context: { credits: 1 } } }))),
});
await nc.flush();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void nc.close().then(() => process.exit(0)));
