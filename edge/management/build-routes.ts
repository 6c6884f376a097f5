import { decodeKeyset, encodeKeyset } from './keyset.ts';
import { Type } from 'typebox';
import { PlatformError, type Services } from '../../runtime/index.ts';
import type { PluginBuildRow } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { component, data, DEFAULT_LIMIT, type ManagementApp } from './schemas.ts';
import { BuildBody, BuildListQuery, BuildPath, BuildSchema, type BuildWire } from './build-schemas.ts';



const toWire = (b: PluginBuildRow): BuildWire => ({
  id: b.id,
  name: b.name,
  description: b.description,
  owner_id: b.ownerId,
  status: b.status,
  capability_id: b.capabilityId,
  version: b.version,
  logs: b.logs,
  error: b.error,
  created_at: b.createdAt,
  updated_at: b.updatedAt,
});
const cursorOf = (b: PluginBuildRow) => encodeKeyset(b.createdAt, b.id);
const readCursor = (cursor: string) => {
  const k = decodeKeyset(cursor, { uuid: true });
  return { createdAt: k.at, id: k.id };
};

/**
 * Plugin builds (spec §1: create, list, read, cancel). Creating one needs write authority: a build registers a plugin
 * version that activates itself, as an upload does. Reading: its owner, or admins and owners of the account.
 */
export function buildRoutes(app: ManagementApp, services: AuthServices & Pick<Services, 'pluginBuilds'>) {
  const shared = { tags: ['plugin-builds'], security: CREDENTIAL };
  const one = { config: { malformedPath: 'BUILD_NOT_FOUND' as const } };
  const notFound = { ...BAD_PATH, 404: 'No such build visible to this caller.' };
  const OneBuild = data(component(BuildSchema), 'The build.');

  app.post(
    '/v1/plugin-builds',
    { onRequest: requireAuthority(services, 'write'), schema: { ...shared, operationId: 'createPluginBuild', summary: 'Build a plugin from JavaScript', description: 'Answers at once (`queued`); the build compiles with componentize-js in a process of its own (3 min, 3 GiB at most), then registers the plugin version, which activates itself.', body: BuildBody, response: { 201: OneBuild, ...errorResponses([400, 403, 413, 500, 503]) } } },
    async (request, reply) => {
      const b = request.body;
      const build = await services.pluginBuilds.create(request.caller!, { name: b.name, source: b.source, wit: b.wit, world: b.world, ...(b.description !== undefined ? { description: b.description } : {}), ...(b.config !== undefined ? { config: b.config } : {}) });
      return reply.code(201).send({ data: toWire(build) });
    },
  );
  app.get('/v1/plugin-builds', { onRequest: requireAuthority(services, 'read'), schema: { ...shared, operationId: 'listPluginBuilds', summary: 'List plugin builds', querystring: BuildListQuery, response: { 200: data(Type.Object({ builds: Type.Array(component(BuildSchema)), next_cursor: Type.Union([Type.String(), Type.Null()]) }), 'Builds, newest first.'), ...errorResponses([400, 403, 500, 503]) } } }, async (request) => {
    const { limit = DEFAULT_LIMIT, cursor } = request.query;
    const rows = await services.pluginBuilds.list(request.caller!, { limit: limit + 1, ...(cursor ? { before: readCursor(cursor) } : {}) });
    const page = rows.slice(0, limit);
    return { data: { builds: page.map(toWire), next_cursor: rows.length > limit ? cursorOf(page.at(-1)!) : null } };
  });
  app.get('/v1/plugin-builds/:id', { onRequest: requireAuthority(services, 'read'), ...one, schema: { ...shared, operationId: 'getPluginBuild', summary: 'Read a build: status and logs', params: BuildPath, response: { 200: OneBuild, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => ({
    data: toWire(await services.pluginBuilds.get(request.caller!, request.params.id)),
  }));
  app.post('/v1/plugin-builds/:id/cancel', { onRequest: requireAuthority(services, 'write'), ...one, schema: { ...shared, operationId: 'cancelPluginBuild', summary: 'Cancel a build', description: 'A queued or building build stops (its process is killed). A build that ended is 409 `BUILD_ENDED`.', params: BuildPath, response: { 200: OneBuild, ...errorResponses([400, 403, 404, 409, 500, 503], notFound) } } }, async (request) => ({
    data: toWire(await services.pluginBuilds.cancel(request.caller!, request.params.id)),
  }));
}
