import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import { Type, type TSchema } from 'typebox';
import { CATEGORY_STATUS, ManagementErrorSchema, type Category } from './errors.ts';
import { component, COMPONENTS, type ManagementApp } from './schemas.ts';
import { AUTONOMY_COMPONENTS } from './autonomy-schemas.ts';
import { FILES_COMPONENTS } from './files-schemas.ts';
import { SKILL_COMPONENTS } from './skill-schemas.ts';
import { WORKFLOW_COMPONENTS } from './workflow-schemas.ts';
import { BUILD_COMPONENTS } from './build-schemas.ts';
import { SCHEDULE_COMPONENTS } from './schedule-schemas.ts';

/**
 * The OpenAPI 3.1 document of the management API, generated from the routes' own schemas (@fastify/swagger collects
 * each route as it is added) and served at `GET /v1/openapi.json` without a credential. This file holds what the
 * routes share in it: the credential forms, and the error answers every route declares.
 */

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The four credential header forms of spec §5, in the order they are checked; any one admits a caller. */
export const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <credential>`: an API key (`ak-...`) or a device-flow access token. Preferred.' },
  authorizationApiKey: { type: 'http', scheme: 'ApiKey', description: '`Authorization: ApiKey <credential>`.' },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'API-Key', description: '`API-Key: <credential>`.' },
  xApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: '`X-API-Key: <credential>`.' },
} as const;

/** `security` of a route that needs a credential (the alternatives) and of one that needs none. */
export const CREDENTIAL = Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] as string[] }));
export const NO_CREDENTIAL: { [name: string]: string[] }[] = [];

export type ErrorStatus = (typeof CATEGORY_STATUS)[Category];

const MEANING: Record<ErrorStatus, string> = {
  400: 'The request is invalid; the message names the parameter or field.',
  403: 'No valid credential, or the caller lacks the authority (the management API never answers 401; `code` tells which).',
  404: 'Not found in this account.',
  409: 'Not possible in the current state.',
  413: 'The body is larger than the limit.',
  415: 'Unsupported content type.',
  429: 'Too many requests: retry after `Retry-After` seconds.',
  500: 'Internal error: retry, and report the `x-request-id` if it persists.',
  503: 'Not ready, overloaded, or a part of the platform is unreachable: retry after `Retry-After` seconds.',
};

/** What a 400 means on a route whose path names a resource (a malformed id names none, and answers 404). */
export const BAD_PATH = { 400: 'A path segment that is not valid URL encoding, or longer than 100 characters (`MGMT_INVALID_PATH`).' } as const;

const categoriesOf = (status: number) => (Object.keys(CATEGORY_STATUS) as Category[]).filter((c) => CATEGORY_STATUS[c] === status);

/**
 * The error answers of a route, each with the `ManagementError` body and the categories that status carries; `why`
 * says what a status means on this route when it is more than the general meaning.
 */
export function errorResponses(statuses: readonly ErrorStatus[], why: Partial<Record<ErrorStatus, string>> = {}): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const status of statuses) {
    const categories = categoriesOf(status).map((c) => `\`${c}\``).join(' or ');
    out[status] = {
      description: `${why[status] ?? MEANING[status]} Category ${categories}.`,
      ...(status === 429 || status === 503 ? { headers: { 'retry-after': { type: 'integer', description: 'Seconds to wait before retrying.' } } } : {}),
      content: { 'application/json': { schema: component(ManagementErrorSchema) } },
    };
  }
  return out;
}

/** Registers the document's generator; it must come before the routes, which it collects as they are added. */
export async function registerOpenApi(app: ManagementApp, opts: { apiUrl: string }) {
  for (const schema of [ManagementErrorSchema, ...COMPONENTS, ...AUTONOMY_COMPONENTS, ...FILES_COMPONENTS, ...SKILL_COMPONENTS, ...WORKFLOW_COMPONENTS, ...BUILD_COMPONENTS, ...SCHEDULE_COMPONENTS] as TSchema[]) app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent platform management API',
        version,
        description:
          'Upload plugins, list capabilities, set autonomy policies and log in with the device flow. `/v1` answers are wrapped in `data`; the two OAuth routes answer bare. ' +
          'Errors are `{category, code, message}`; docs/errors.md lists every code. The browser pages (`/device`, `/viz`) and the operator channel are not part of this API.',
      },
      servers: [{ url: opts.apiUrl }],
      tags: [
        { name: 'capabilities', description: 'Plugins, built-ins and connectors of the account.' },
        { name: 'autonomy', description: 'Policies that decide tool calls (account, agent, user), and the decisions they made.' },
        { name: 'approval-gates', description: 'Tool calls waiting for a human decision.' },
        { name: 'attachments', description: 'Files users sent agents: the quota, presigned URLs and `GET /v1/files/{id}`.' },
        { name: 'agents', description: "Agents' home directories and their quota." },
        { name: 'identity', description: 'Outside identities linked to principals.' },
        { name: 'plugin-builds', description: 'Plugins built from JavaScript source (componentize-js).' },
        { name: 'workflows', description: "The operator's workflows (statecharts of steps); read here, written by the operator." },
        { name: 'workflow-runs', description: 'Runs of workflows: start, status, cancel, approve, signal.' },
        { name: 'schedules', description: "Future runs of agents, made by the agents' Scheduler tools: list, read, cancel." },
        { name: 'gateways', description: "Workflows attached to MCP gateways." },
        { name: 'skills', description: 'SKILL.md bundles agents read on demand: content, bindings, import and generate.' },
        { name: 'oauth', description: 'The device authorization grant (RFC 8628).' },
        { name: 'platform', description: 'CLI bootstrap, health probes and this document.' },
        { name: 'viz', description: 'Statecharts of the platform, and live actors of the account.' },
      ],
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    // Named components keep their own names (`#/components/schemas/Capability`) instead of `def-0`.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
}

/** `GET /v1/openapi.json`: the document, built once from the routes when first asked for. */
export function openApiRoute(app: ManagementApp) {
  app.get(
    '/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        tags: ['platform'],
        summary: 'This OpenAPI 3.1 document',
        security: NO_CREDENTIAL,
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI 3.1 document of the management API.' }), ...errorResponses([500]) },
      },
    },
    async () => app.swagger() as unknown as Record<string, unknown>,
  );
}
