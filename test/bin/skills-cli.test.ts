import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { cliPlatform } from '../helpers/cli-platform.ts';

/** `platform skills ...` and `platform agents skills`, each with `--json`, against the demo tenant and its demo rules. */
describe('platform skills', () => {
  let agentId: string;
  const cli = cliPlatform('skills-cli-');
  beforeAll(async () => {
    agentId = (await cli.p.node.services.store.agents.byHandle('demo'))!.id;
  });

  it('[SURF-12] [SURF-24] creates from a folder, binds, lists for the agent, generates with the demo model, imports a SKILL.md and deletes', async () => {
    const folder = path.join(cli.dir, 'notes');
    mkdirSync(path.join(folder, 'templates'), { recursive: true });
    writeFileSync(path.join(folder, 'SKILL.md'), '---\nname: notes\ndescription: Takes meeting notes.\n---\n\nWrite the decisions first.\n');
    writeFileSync(path.join(folder, 'templates', 'note.md'), '# Decisions');
    const lone = path.join(cli.dir, 'SKILL.md');
    writeFileSync(lone, '---\nname: imported\ndescription: From a file.\n---\nBody.\n');
    const created = await runCli(['skills', 'create', '--dir', folder, '--json'], cli.env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ name: 'notes', files: [{ path: 'SKILL.md' }, { path: 'templates/note.md', size: 11 }] });
    const id = created.json.id as string;
    const [bind, generated, imported, usage] = await Promise.all([
      runCli(['skills', 'bind', id, '--agent', agentId, '--json'], cli.env),
      runCli(['skills', 'generate', '--agent', agentId, '--name', 'standup', '--purpose', 'Run a daily standup', '--json'], cli.env),
      runCli(['skills', 'import', '--file', lone, '--json'], cli.env),
      runCli(['skills', 'bind', id], cli.env),
    ]);
    expect(bind.json).toEqual({ skill_id: id, agent_id: agentId, changed: true });
    expect(generated.json).toMatchObject({ name: 'standup', description: 'Run a daily standup', source: 'generate' });
    expect(imported.json).toMatchObject({ name: 'imported', source: 'import' });
    expect(usage.code).toBe(2);
    const [forAgent, content, list, dup] = await Promise.all([
      runCli(['agents', 'skills', agentId, '--json'], cli.env),
      runCli(['skills', 'content', generated.json.id, '--json'], cli.env),
      runCli(['skills', 'list', '--json'], cli.env),
      runCli(['skills', 'create', '--dir', folder, '--json'], cli.env),
    ]);
    expect(forAgent.json.skills.map((s: { name: string }) => s.name)).toEqual(['notes']);
    // The demo rules draft a fixed outline around the purpose.
    expect(content.json.files[0].content).toContain('Use this skill for: Run a daily standup\n\n## Steps');
    expect(list.json.total).toBe(3);
    expect([dup.code, dup.json.error.code]).toEqual([1, 'SKILL_NAME_TAKEN']);
    const deleted = await runCli(['skills', 'delete', id, '--json'], cli.env);
    expect(deleted.json).toEqual({ deleted: id });
    expect((await runCli(['agents', 'skills', agentId, '--json'], cli.env)).json.skills).toEqual([]);
  }, 150_000);
});
