import { PlatformError, SKILL_ARCHIVE_BYTES, type BundleFile, type Services } from '../../runtime/index.ts';
import type { SkillRecord } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import type { ManagementApp } from './schemas.ts';
import {
  AgentSkills,
  OneSkill,
  SkillBindingPath,
  SkillBindings,
  SkillBound,
  SkillContent,
  SkillContentBody,
  SkillCreateBody,
  SkillGenerateBody,
  SkillImportForm,
  SkillImportUrlBody,
  SkillList,
  SkillListQuery,
  SkillPath,
  SkillUpdateBody,
  type SkillWire,
} from './skill-schemas.ts';
import { HomeAgentPath } from './files-schemas.ts';

type SkillServices = AuthServices & Pick<Services, 'skills'>;

export const toSkillWire = (s: SkillRecord, files: readonly { path: string; size: number }[]): SkillWire => ({
  id: s.id,
  name: s.name,
  description: s.description,
  version: s.version,
  size: s.size,
  source: s.source,
  files: files.map((f) => ({ path: f.path, size: f.size })),
  created_at: s.createdAt,
  created_by: s.createdBy,
  updated_at: s.updatedAt,
  updated_by: s.updatedBy,
});

/** The files of a request: text as UTF-8, or base64. */
function filesIn(files: readonly { path: string; content?: string; content_base64?: string }[]): BundleFile[] {
  return files.map((f, i) => {
    if ((f.content === undefined) === (f.content_base64 === undefined)) throw new PlatformError('MGMT_INVALID_BODY', `malformed request body: files.${i} needs exactly one of content and content_base64`);
    if (f.content !== undefined) return { path: f.path, content: Buffer.from(f.content, 'utf8') };
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(f.content_base64!)) throw new PlatformError('MGMT_INVALID_BODY', `malformed request body: files.${i}.content_base64 is not base64`);
    return { path: f.path, content: Buffer.from(f.content_base64!, 'base64') };
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const asText = (b: Buffer): string | null => {
  try {
    return utf8.decode(b);
  } catch {
    return null;
  }
};

/**
 * Skills (spec §1): create, read, update, delete; content; bindings to agents; import; generate; and
 * `GET /v1/agents/{agent_id}/skills`. Reading needs read authority; every change needs write (admins and owners),
 * as skills change what the account's agents do.
 */
export function skillRoutes(app: ManagementApp, services: SkillServices) {
  const read = requireAuthority(services, 'read');
  const write = requireAuthority(services, 'write');
  const shared = { tags: ['skills'], security: CREDENTIAL };
  const onePath = { config: { malformedPath: 'SKILL_NOT_FOUND' as const } };
  const notFound = { ...BAD_PATH, 404: 'No such skill (or agent) in this account.' };
  // Skills as the API shows them: their files by path and size, read in one statement and without their bytes.
  const wireAll = async (list: readonly SkillRecord[]) => {
    const sizes = await services.skills.sizes(list[0]?.accountId ?? '', list.map((s) => s.id));
    return list.map((s) => toSkillWire(s, sizes.get(s.id) ?? []));
  };
  const wire = async (s: SkillRecord) => (await wireAll([s]))[0]!;
  const actor = (c: { accountId: string; principalId: string }) => ({ accountId: c.accountId, principalId: c.principalId });

  app.get('/v1/skills', { onRequest: read, schema: { ...shared, operationId: 'listSkills', summary: 'List skills', querystring: SkillListQuery, response: { 200: SkillList, ...errorResponses([400, 403, 500, 503]) } } }, async (request) => {
    const { limit = 20, offset = 0, search } = request.query;
    const page = await services.skills.list(request.caller!.accountId, { limit, offset, ...(search ? { search } : {}) });
    return { data: { skills: await wireAll(page.skills), total: page.total, limit, offset } };
  });

  app.post(
    '/v1/skills',
    { onRequest: write, schema: { ...shared, operationId: 'createSkill', summary: 'Create a skill', body: SkillCreateBody, response: { 201: OneSkill, ...errorResponses([400, 403, 409, 413, 500, 503]) } } },
    async (request, reply) => {
      const b = request.body;
      const s = await services.skills.create(actor(request.caller!), filesIn(b.files), { ...(b.name !== undefined ? { name: b.name } : {}), ...(b.description !== undefined ? { description: b.description } : {}) });
      return reply.code(201).send({ data: await wire(s) });
    },
  );

  app.get('/v1/skills/:id', { onRequest: read, ...onePath, schema: { ...shared, operationId: 'getSkill', summary: 'Read a skill', params: SkillPath, response: { 200: OneSkill, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => ({
    data: await wire(await services.skills.get(request.caller!.accountId, request.params.id)),
  }));

  app.patch(
    '/v1/skills/:id',
    { onRequest: write, ...onePath, schema: { ...shared, operationId: 'updateSkill', summary: 'Update a skill', params: SkillPath, body: SkillUpdateBody, response: { 200: OneSkill, ...errorResponses([400, 403, 404, 409, 413, 500, 503], notFound) } } },
    async (request) => {
      const b = request.body;
      const s = await services.skills.update(actor(request.caller!), request.params.id, { ...(b.name !== undefined ? { name: b.name } : {}), ...(b.description !== undefined ? { description: b.description } : {}), ...(b.files ? { files: filesIn(b.files) } : {}) });
      return { data: await wire(s) };
    },
  );

  app.delete('/v1/skills/:id', { onRequest: write, ...onePath, schema: { ...shared, operationId: 'deleteSkill', summary: 'Delete a skill (and its bindings)', params: SkillPath, response: { 204: { description: 'Deleted.', type: 'null' }, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request, reply) => {
    await services.skills.remove(request.caller!.accountId, request.params.id);
    return reply.code(204).send(null);
  });

  app.get('/v1/skills/:id/content', { onRequest: read, ...onePath, schema: { ...shared, operationId: 'getSkillContent', summary: "Read a skill's bundle", params: SkillPath, response: { 200: SkillContent, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => {
    const files = await services.skills.files(request.caller!.accountId, request.params.id);
    return {
      data: {
        files: files.map((f) => {
          const text = asText(f.content);
          return { path: f.path, size: f.content.length, ...(text !== null ? { content: text } : { content_base64: f.content.toString('base64') }) };
        }),
      },
    };
  });

  app.put(
    '/v1/skills/:id/content',
    { onRequest: write, ...onePath, schema: { ...shared, operationId: 'replaceSkillContent', summary: "Replace a skill's bundle", description: "The front matter of the new SKILL.md sets the name and description.", params: SkillPath, body: SkillContentBody, response: { 200: OneSkill, ...errorResponses([400, 403, 404, 409, 413, 500, 503], notFound) } } },
    async (request) => ({ data: await wire(await services.skills.update(actor(request.caller!), request.params.id, { files: filesIn(request.body.files) })) }),
  );

  app.get('/v1/skills/:id/bindings', { onRequest: read, ...onePath, schema: { ...shared, operationId: 'listSkillBindings', summary: 'The agents a skill is bound to', params: SkillPath, response: { 200: SkillBindings, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => {
    const list = await services.skills.bindings(request.caller!.accountId, request.params.id);
    return { data: { bindings: list.map((b) => ({ agent_id: b.agentId, bound_at: b.boundAt, bound_by: b.boundBy })) } };
  });

  app.put('/v1/skills/:id/bindings/:agent_id', { onRequest: write, ...onePath, schema: { ...shared, operationId: 'bindSkill', summary: 'Bind a skill to an agent', params: SkillBindingPath, response: { 200: SkillBound, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => {
    const changed = await services.skills.bind(actor(request.caller!), request.params.id, request.params.agent_id);
    return { data: { skill_id: request.params.id, agent_id: request.params.agent_id, changed } };
  });

  app.delete('/v1/skills/:id/bindings/:agent_id', { onRequest: write, ...onePath, schema: { ...shared, operationId: 'unbindSkill', summary: 'Unbind a skill from an agent', params: SkillBindingPath, response: { 200: SkillBound, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => {
    const changed = await services.skills.unbind(request.caller!.accountId, request.params.id, request.params.agent_id);
    return { data: { skill_id: request.params.id, agent_id: request.params.agent_id, changed } };
  });

  app.get(
    '/v1/agents/:agent_id/skills',
    { onRequest: read, config: { malformedPath: 'MGMT_AGENT_NOT_FOUND' }, schema: { tags: ['agents'], security: CREDENTIAL, operationId: 'listAgentSkills', summary: 'The skills bound to an agent', params: HomeAgentPath, response: { 200: AgentSkills, ...errorResponses([400, 403, 404, 500, 503], { ...BAD_PATH, 404: 'No such agent in this account.' }) } } },
    async (request) => ({ data: { skills: await wireAll(await services.skills.ofAgent(request.caller!.accountId, request.params.agent_id)) } }),
  );

  app.post(
    '/v1/skills/import',
    {
      onRequest: write,
      bodyLimit: SKILL_ARCHIVE_BYTES + 64 * 1024,
      // The form is read as it streams (below); the schema documents it.
      validatorCompiler: () => () => true,
      schema: { ...shared, operationId: 'importSkill', summary: 'Import a skill from an archive', consumes: ['multipart/form-data'], body: SkillImportForm, response: { 201: OneSkill, ...errorResponses([400, 403, 409, 413, 415, 500, 503]) } },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw new PlatformError('MGMT_INVALID_BODY', 'malformed request: send multipart/form-data with the file field `archive`');
      let archive: Buffer | null = null;
      const fields: { name?: string; description?: string } = {};
      try {
        for await (const part of request.parts({ limits: { fileSize: SKILL_ARCHIVE_BYTES, files: 1 } })) {
          if (part.type === 'file') {
            const bytes = await part.toBuffer();
            if (part.fieldname === 'archive') archive = bytes;
          } else if ((part.fieldname === 'name' || part.fieldname === 'description') && typeof part.value === 'string') fields[part.fieldname] = part.value;
        }
      } catch (err) {
        if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new PlatformError('SKILL_TOO_LARGE', `an imported skill is at most ${SKILL_ARCHIVE_BYTES} bytes as sent`);
        throw new PlatformError('MGMT_INVALID_BODY', `malformed multipart body: ${(err as Error).message}`);
      }
      if (!archive || archive.length === 0) throw new PlatformError('MGMT_INVALID_BODY', 'missing archive: send the skill as the multipart file field `archive` (a .tar.gz, or a SKILL.md)');
      return reply.code(201).send({ data: await wire(await services.skills.importArchive(actor(request.caller!), archive, fields)) });
    },
  );

  app.post(
    '/v1/skills/import-url',
    { onRequest: write, schema: { ...shared, operationId: 'importSkillFromUrl', summary: 'Import a skill from a URL', body: SkillImportUrlBody, response: { 201: OneSkill, ...errorResponses([400, 403, 409, 413, 500, 503]) } } },
    async (request, reply) => {
      const { url, name, description } = request.body;
      const s = await services.skills.importUrl(actor(request.caller!), url, { ...(name !== undefined ? { name } : {}), ...(description !== undefined ? { description } : {}) });
      return reply.code(201).send({ data: await wire(s) });
    },
  );

  app.post(
    '/v1/skills/generate',
    { onRequest: write, schema: { ...shared, operationId: 'generateSkill', summary: "Generate a skill with an agent's model", description: "The agent's model drafts the instructions from `purpose`; the skill is created with `name` (and `description`, else the purpose's first line).", body: SkillGenerateBody, response: { 201: OneSkill, ...errorResponses([400, 403, 404, 409, 500, 503]) } } },
    async (request, reply) => {
      const b = request.body;
      const s = await services.skills.generate(actor(request.caller!), { agentId: b.agent_id, name: b.name, purpose: b.purpose, ...(b.description !== undefined ? { description: b.description } : {}) });
      return reply.code(201).send({ data: await wire(s) });
    },
  );
}
