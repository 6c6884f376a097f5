// Makes a new embedded database in an empty directory, then exits (see pglite-cluster.ts): PGlite's initdb, then the
// setup scripts (the migrations). A process of its own, started without the TypeScript loader: it loads PGlite only,
// and everything initdb used goes back to the system when it exits.
import { PGlite } from '@electric-sql/pglite';

// A parent that goes away leaves nothing running: the half-made directory is removed by the next start.
process.on('disconnect', () => process.exit(1));

// startParams: the settings the node adds to PGlite's own start parameters.
process.once('message', async ({ dataDir, startParams, setup }) => {
  let reply = { ok: true };
  try {
    // create() finds no cluster in dataDir and runs initdb.
    const db = await PGlite.create({ dataDir, startParams: [...PGlite.defaultStartParams, ...startParams] });
    for (const step of setup) {
      try {
        await db.exec(step.sql);
      } catch (err) {
        reply = { ok: false, step: step.name, message: err instanceof Error ? err.message : String(err) };
        break;
      }
    }
    // A clean shutdown, so the cluster can be copied.
    await db.close();
  } catch (err) {
    reply = { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  // The reply says how it went; the exit code only that the process got this far.
  process.send(reply, () => process.exit(0));
});
