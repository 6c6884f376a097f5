import { decodeKeyset, encodeKeyset } from './keyset.ts';
import { hasAuthority, MAX_ATTACHMENT_BYTES, PlatformError, type Caller, type Services } from '../../runtime/index.ts';
import type { AttachmentRow } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { AttachmentList, AttachmentListQuery, AttachmentQuota, FileContentQuery, FilePath, OneAttachment, PresignBody, PresignedUrl, type AttachmentWire } from './files-schemas.ts';
import { BAD_PATH, CREDENTIAL, errorResponses, NO_CREDENTIAL } from './openapi.ts';
import { DEFAULT_LIMIT, type ManagementApp } from './schemas.ts';

const toWire = (a: AttachmentRow): AttachmentWire => ({
  id: a.id,
  agent_id: a.agentId,
  owner_id: a.ownerId,
  task_id: a.taskId,
  context_id: a.contextId,
  part: a.part,
  kind: a.kind,
  filename: a.filename,
  media_type: a.mediaType,
  size: a.size,
  sha256: a.sha256,
  width: a.width,
  height: a.height,
  created_at: a.createdAt,
});

/** Admins and owners see every attachment of the account; anyone else the ones they sent. */
const seesAll = (c: Caller) => hasAuthority(c.role, 'write');

const cursorOf = (a: AttachmentRow) => encodeKeyset(a.createdAt, a.id);
const readCursor = (cursor: string) => {
  const k = decodeKeyset(cursor, { uuid: true });
  return { createdAt: k.at, id: k.id };
};

/** `filename*` (RFC 6266 / 5987) for any name, and a plain ASCII fallback. */
function disposition(filename: string | null): string {
  const name = filename ?? 'file';
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** A media type as a header can carry it (the sender chose it): else the bytes go as application/octet-stream. */
const MEDIA_TYPE = /^[a-zA-Z0-9!#$&^_.+-]{1,127}\/[a-zA-Z0-9!#$&^_.+-]{1,127}$/;

type FileServices = AuthServices & Pick<Services, 'fileLinks' | 'config'>;

/**
 * Attachments (spec §1: read the account's quota; regenerate a presigned URL), the list and one attachment they
 * need, and files: `GET /v1/files/{id}` redirects a caller to a presigned URL, which the node serves to whoever
 * holds it until it expires. The bytes are served as a download, never rendered on the API's origin.
 */
export function attachmentRoutes(app: ManagementApp, services: FileServices) {
  const found = async (c: Caller, id: string) => {
    const a = await services.store.attachments.get(c.accountId, id);
    if (!a || !(seesAll(c) || a.ownerId === c.principalId)) throw new PlatformError('MGMT_ATTACHMENT_NOT_FOUND', `no attachment ${id} visible to this caller`);
    return a;
  };
  const shared = { tags: ['attachments'], security: CREDENTIAL };
  const onePath = { config: { malformedPath: 'MGMT_ATTACHMENT_NOT_FOUND' as const } };

  app.get(
    '/v1/attachments',
    {
      onRequest: requireAuthority(services, 'read'),
      schema: {
        ...shared,
        operationId: 'listAttachments',
        summary: 'List attachments',
        description: "The files users sent the account's agents, newest first: every one for admins and owners, one's own for anyone else.",
        querystring: AttachmentListQuery,
        response: { 200: AttachmentList, ...errorResponses([400, 403, 500, 503]) },
      },
    },
    async (request) => {
      const c = request.caller!;
      const { task_id, context_id, limit = DEFAULT_LIMIT, cursor } = request.query;
      const rows = await services.store.attachments.list(c.accountId, {
        limit: limit + 1,
        ...(task_id !== undefined ? { taskId: task_id } : {}),
        ...(context_id !== undefined ? { contextId: context_id } : {}),
        ...(cursor ? { before: readCursor(cursor) } : {}),
        ...(seesAll(c) ? {} : { ownerId: c.principalId }),
      });
      const page = rows.slice(0, limit);
      return { data: { attachments: page.map(toWire), next_cursor: rows.length > limit ? cursorOf(page.at(-1)!) : null } };
    },
  );

  app.get(
    '/v1/attachments/quota',
    {
      onRequest: requireAuthority(services, 'read'),
      schema: { ...shared, operationId: 'getAttachmentQuota', summary: "Read the account's attachment quota", response: { 200: AttachmentQuota, ...errorResponses([403, 500, 503]) } },
    },
    async (request) => {
      const usage = await services.store.attachments.usage(request.caller!.accountId);
      return { data: { used_bytes: usage.bytes, limit_bytes: services.config.attachmentQuotaBytes, files: usage.files, max_file_bytes: MAX_ATTACHMENT_BYTES } };
    },
  );

  app.get(
    '/v1/attachments/:id',
    {
      onRequest: requireAuthority(services, 'read'),
      ...onePath,
      schema: { ...shared, operationId: 'getAttachment', summary: 'Read one attachment', params: FilePath, response: { 200: OneAttachment, ...errorResponses([400, 403, 404, 500, 503], BAD_PATH) } },
    },
    async (request) => ({ data: toWire(await found(request.caller!, request.params.id)) }),
  );

  app.post(
    '/v1/attachments/:id/url',
    {
      onRequest: requireAuthority(services, 'read'),
      ...onePath,
      schema: {
        ...shared,
        operationId: 'presignAttachment',
        summary: 'Regenerate a presigned URL',
        description: 'A new URL that fetches the file without a credential until it expires (`expires_in` seconds, default PLATFORM_FILE_LINK_TTL_SECONDS). Earlier URLs keep working until their own expiry.',
        params: FilePath,
        body: PresignBody,
        response: { 200: PresignedUrl, ...errorResponses([400, 403, 404, 500, 503], BAD_PATH) },
      },
    },
    async (request) => {
      const a = await found(request.caller!, request.params.id);
      const link = services.fileLinks.sign(a.accountId, a.id, request.body?.expires_in);
      return { data: { id: a.id, url: link.url, expires_at: link.expiresAt } };
    },
  );

  app.get(
    '/v1/files/:id',
    {
      onRequest: requireAuthority(services, 'read'),
      ...onePath,
      schema: {
        tags: ['attachments'],
        security: CREDENTIAL,
        operationId: 'getFile',
        summary: 'Fetch a file: a redirect to its presigned URL',
        description: 'Answers 302 with `Location`: a presigned URL of the file, valid for PLATFORM_FILE_LINK_TTL_SECONDS. Clients that follow redirects get the bytes.',
        params: FilePath,
        response: { 302: { description: 'The presigned URL is in `Location`.' }, ...errorResponses([400, 403, 404, 500, 503], BAD_PATH) },
      },
    },
    async (request, reply) => {
      const a = await found(request.caller!, request.params.id);
      return reply.code(302).header('location', services.fileLinks.sign(a.accountId, a.id).url).header('cache-control', 'no-store').send();
    },
  );

  app.get(
    '/v1/files/:id/content',
    {
      ...onePath,
      schema: {
        tags: ['attachments'],
        security: NO_CREDENTIAL,
        operationId: 'getFileContent',
        summary: "A file's bytes, by presigned URL",
        description: 'The URL is the authority (no credential is read): 403 `MGMT_FILE_LINK_INVALID` when its signature does not match or it expired. The bytes come as a download (`Content-Disposition: attachment`), never rendered.',
        params: FilePath,
        querystring: FileContentQuery,
        response: { 200: { description: 'The bytes, with the media type they were sent with.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } }, ...errorResponses([400, 403, 404, 500, 503], BAD_PATH) },
      },
    },
    async (request, reply) => {
      const claims = services.fileLinks.verify(request.params.id, request.query);
      if (claims === 'signature') throw new PlatformError('MGMT_FILE_LINK_INVALID', 'the file link is not valid: its signature does not match (was the URL altered or cut short?)');
      if (claims === 'expired') throw new PlatformError('MGMT_FILE_LINK_INVALID', 'the file link has expired; ask for a new one');
      const a = await services.store.attachments.get(claims.accountId, claims.fileId);
      const bytes = a ? await services.store.blobs.get(a.sha256) : null;
      if (!a || !bytes) throw new PlatformError('MGMT_ATTACHMENT_NOT_FOUND', `no file ${request.params.id}`);
      return reply
        .header('content-type', MEDIA_TYPE.test(a.mediaType) ? a.mediaType : 'application/octet-stream')
        .header('content-disposition', disposition(a.filename))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "sandbox; default-src 'none'")
        .header('cache-control', 'private, no-store')
        .send(bytes as unknown as string); // the schema's binary string is a Buffer on the wire
    },
  );
}
