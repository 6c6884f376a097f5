import { randomUUID } from 'node:crypto';
import type { Store } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { A2aCaller, A2aPart } from './a2a-shapes.ts';
import { base64Length, readAttachments, type Attachment, type AttachmentDeps } from './attachments.ts';

/** An attachment the account now holds: the blob, and the row (its `id`) that the quota counts and file links name. */
export type StoredAttachment = Attachment & { id: string };

/** Where a message's attachments belong. */
export interface AttachmentOwner {
  taskId: string;
  contextId: string;
}

const quotaText = (quota: number) => `${quota} bytes (PLATFORM_ATTACHMENT_QUOTA_BYTES)`;
const overQuota = (used: number, adding: string, quota: number) =>
  new PlatformError('A2A_ATTACHMENT_QUOTA_EXCEEDED', `message.parts: the account holds ${used} bytes of attachments and this message ${adding}; the account may hold ${quotaText(quota)}`);

/**
 * The attachments of an inbound message, read and stored (attachments.ts) and recorded as the account's: one row per
 * file part, within the account's quota. What the message's `raw` parts add is checked against the quota before a
 * byte is decoded; `url` parts are known once fetched, and the rows go in with a check under a lock of the account (two
 * messages at once cannot both slip under the quota). Messages without file parts cost no statement.
 */
export function attachmentRecorder(deps: Omit<AttachmentDeps, 'accountId' | 'signal'> & { store: Pick<Store, 'attachments' | 'tx'> & AttachmentDeps['store']; quotaBytes: number; now: () => number }) {
  return async (parts: readonly A2aPart[], caller: A2aCaller, owner: AttachmentOwner): Promise<StoredAttachment[]> => {
    if (!parts.some((p) => typeof p.raw === 'string' || typeof p.url === 'string')) return [];
    let known = 0;
    for (const p of parts) if (typeof p.raw === 'string') known += base64Length(p.raw) ?? 0;
    const { bytes: used } = await deps.store.attachments.usage(caller.accountId);
    if (used + known > deps.quotaBytes) throw overQuota(used, `adds ${known} bytes`, deps.quotaBytes);
    const read = await readAttachments(parts, { ...deps, accountId: caller.accountId, signal: caller.signal });
    const stored = read.map((a) => ({ ...a, id: randomUUID() }));
    const rows = stored.map((a) => ({
      accountId: caller.accountId,
      id: a.id,
      agentId: caller.agentId,
      ownerId: caller.principalId,
      taskId: owner.taskId,
      contextId: owner.contextId,
      part: a.part,
      kind: a.kind,
      sha256: a.hash,
      size: a.size,
      mediaType: a.mediaType,
      filename: a.filename,
      width: a.width ?? null,
      height: a.height ?? null,
    }));
    const at = new Date(deps.now()).toISOString();
    const added = await deps.store.tx(async (r) => {
      await r.accounts.lock(caller.accountId);
      return r.attachments.addWithin(caller.accountId, rows, deps.quotaBytes, at);
    });
    if (!added) {
      const total = stored.reduce((n, a) => n + a.size, 0);
      throw overQuota((await deps.store.attachments.usage(caller.accountId)).bytes, `adds ${total} bytes`, deps.quotaBytes);
    }
    return stored;
  };
}
