import { PlatformError, registerUpload, type Services } from '../../runtime/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { CREDENTIAL, errorResponses } from './openapi.ts';
import { UploadForm, UploadResult, type ManagementApp } from './schemas.ts';

/** Spec §8: the upload body is capped at 20 MB (decimal), answered 413 above it. */
export const UPLOAD_BODY_LIMIT = 20_000_000;

function tooLarge() {
  return new PlatformError('MGMT_BODY_TOO_LARGE', `request body too large: uploads are limited to ${UPLOAD_BODY_LIMIT} bytes (20 MB)`);
}

/**
 * `POST /v1/capabilities/upload`: multipart/form-data with one file field `archive` (an `.npack`). An oversized
 * upload is refused from its declared length, or at the limit while it streams, never after buffering all of it.
 */
export function uploadRoute(app: ManagementApp, services: AuthServices & Pick<Services, 'actors' | 'tasks'>) {
  app.post(
    '/v1/capabilities/upload',
    {
      bodyLimit: UPLOAD_BODY_LIMIT,
      // Multipart is read in the handler: nothing of the body is parsed before this check.
      preValidation: requireAuthority(services, 'write'),
      // The form is read as it streams (below), so there is no parsed body to validate: the schema documents it.
      validatorCompiler: () => () => true,
      schema: {
        operationId: 'uploadPlugin',
        tags: ['capabilities'],
        summary: 'Upload a plugin archive',
        description:
          'Registers the archive as the next version of its plugin (a new plugin the first time its name is seen); the version activates by itself (write authority). ' +
          'The WASM must be a Component Model binary importing only allowed WASI interfaces and exporting a callable function; a `platform.yaml` must declare `schema_version: "1.0"`.',
        security: CREDENTIAL,
        consumes: ['multipart/form-data'],
        body: UploadForm,
        response: {
          200: UploadResult,
          ...errorResponses([400, 403, 413, 415, 500, 503], {
            400: 'Missing `archive`, a file name not ending `.npack`, an empty file, an unreadable archive, an invalid config (`problems` lists each), or failed WASM validation.',
            413: 'The body is above 20 MB.',
          }),
        },
      },
      // A declared length over the limit is refused before a byte of the body is read.
      onRequest: async (request) => {
        const declared = Number(request.headers['content-length']);
        if (Number.isFinite(declared) && declared > UPLOAD_BODY_LIMIT) throw tooLarge();
      },
    },
    async (request) => {
      if (!request.isMultipart()) throw new PlatformError('MGMT_INVALID_BODY', 'malformed request: send multipart/form-data with the file field `archive`');
      let archive: { filename: string; bytes: Buffer } | null = null;
      // Without a declared length (chunked), the parts are counted as they stream: each file is capped by the
      // parser, and their sum here.
      let total = 0;
      try {
        for await (const part of request.parts()) {
          if (part.type !== 'file') continue;
          const bytes = await part.toBuffer();
          total += bytes.length;
          if (total > UPLOAD_BODY_LIMIT) throw tooLarge();
          // Only the first `archive` file counts; other fields and files are ignored.
          if (part.fieldname === 'archive' && !archive) archive = { filename: part.filename ?? '', bytes };
        }
      } catch (err) {
        if (err instanceof PlatformError) throw err;
        const code = (err as { code?: string }).code;
        if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
        if ((err as { cause?: unknown }).cause instanceof PlatformError) throw (err as { cause: PlatformError }).cause;
        throw new PlatformError('MGMT_INVALID_BODY', `malformed multipart body: ${(err as Error).message}`);
      }
      if (!archive) throw new PlatformError('MGMT_INVALID_BODY', 'missing archive: send the plugin as the multipart file field `archive`');
      if (!archive.filename.endsWith('.npack')) {
        throw new PlatformError('MGMT_INVALID_BODY', `wrong extension: the archive's file name must end .npack (got ${JSON.stringify(archive.filename)})`);
      }
      if (archive.bytes.length === 0) throw new PlatformError('MGMT_INVALID_BODY', 'empty archive: the `archive` file has no content');
      const caller = request.caller!;
      const data = await registerUpload(services, { accountId: caller.accountId, principalId: caller.principalId, filename: archive.filename, archive: archive.bytes, give: true });
      return { data };
    },
  );
}
