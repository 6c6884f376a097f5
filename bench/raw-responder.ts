// The reference of actor-ask: a bare NATS responder in a process of its own, as an actor's node is, answering with
// a reply of the same bytes as a routed read so only the platform's work differs between the two.
import { connect } from '@nats-io/transport-node';

const [url, subject] = process.argv.slice(2);
if (!url || !subject) {
  process.stderr.write('usage: raw-responder.ts <nats-url> <subject>  (reply body in BENCH_RAW_REPLY)\n');
  process.exit(2);
}
const reply = new TextEncoder().encode(process.env.BENCH_RAW_REPLY ?? '{"ok":true,"data":null}');
const nc = await connect({ servers: url, name: `bench-raw-responder-${process.pid}` });
nc.subscribe(subject, { callback: (err, msg) => void (err || msg.respond(reply)) });
await nc.flush();

const stop = () => void nc.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The bench holds our stdin open; EOF means it is gone, so no orphan keeps answering on the shared server.
process.stdin.on('end', stop).resume();
process.stdout.write('ready\n');
