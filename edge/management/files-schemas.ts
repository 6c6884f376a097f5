import { Type, type Static } from 'typebox';
import { FILE_LINK_TTL, HOME_LIST_LIMIT, IDENTITY_LIMITS, JOURNAL_KINDS, JOURNAL_LIMITS, MAX_ATTACHMENT_BYTES, PROVIDER_PATTERN } from '../../runtime/index.ts';
import { component, data, DEFAULT_LIMIT, MAX_LIMIT, Text, Timestamp, Uuid } from './schemas.ts';
import { PATTERNS } from './validation.ts';

/**
 * Wire shapes of the file routes (spec §1: Attachments, the agent rows' home directory and quota, `GET /v1/files/{id}`,
 * `POST /v1/identity/verify`; their fields are "not shown", docs/files-and-identity.md describes them).
 */

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(t: T) => Type.Union([t, Type.Null()]);

// Attachments --------------------------------------------------------------------------------------------------

const AttachmentSchema = Type.Object(
  {
    id: Uuid('The attachment id: `GET /v1/files/{id}` serves its bytes.'),
    agent_id: Uuid('The agent the message was sent to.'),
    owner_id: Type.String({ description: 'The principal who sent it.' }),
    task_id: Type.String({ description: 'The A2A task of the message.' }),
    context_id: Type.String({ description: 'The thread (A2A contextId).' }),
    part: Type.Integer({ minimum: 0, description: "Index of the part in the message's `parts`." }),
    kind: Type.String({ enum: ['raw', 'url'], description: 'Sent inline (`raw`) or fetched from a `url` part.' }),
    filename: Nullable(Type.String()),
    media_type: Type.String(),
    size: Type.Integer({ minimum: 0, maximum: MAX_ATTACHMENT_BYTES, description: 'Bytes.' }),
    sha256: Type.String({ description: 'SHA-256 of the bytes, lowercase hex.' }),
    width: Nullable(Type.Integer({ description: 'Pixels, for images.' })),
    height: Nullable(Type.Integer({ description: 'Pixels, for images.' })),
    created_at: Timestamp('When it was received'),
  },
  { $id: 'Attachment', description: 'A file part a user sent an agent, as the account holds it.' },
);
export type AttachmentWire = Static<typeof AttachmentSchema>;

export const AttachmentListQuery = Type.Object({
  task_id: Type.Optional(Text(200, 'Only the attachments of this task.')),
  context_id: Type.Optional(Text(200, 'Only the attachments of this thread.')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size.' })),
  cursor: Type.Optional(Text(300, 'Where the previous page ended (its `next_cursor`).')),
});
export const AttachmentList = data(
  Type.Object({ attachments: Type.Array(component(AttachmentSchema)), next_cursor: Nullable(Type.String({ description: 'The next (older) page, or null on the last.' })) }),
  'One page of attachments, newest first.',
);
export const OneAttachment = data(component(AttachmentSchema), 'The attachment.');
export const FilePath = Type.Object({ id: Uuid('The attachment (file) id.') });

export const AttachmentQuota = data(
  Type.Object({
    used_bytes: Type.Integer({ minimum: 0, description: 'Bytes of attachments the account holds.' }),
    limit_bytes: Type.Integer({ minimum: 0, description: 'Bytes it may hold (PLATFORM_ATTACHMENT_QUOTA_BYTES).' }),
    files: Type.Integer({ minimum: 0, description: 'Attachments it holds.' }),
    max_file_bytes: Type.Integer({ description: 'The most one attachment may be (spec §8: 20 MiB).' }),
  }),
  "The account's attachment quota.",
);

export const PresignBody = Type.Object(
  { expires_in: Type.Optional(Type.Integer({ minimum: FILE_LINK_TTL.min, maximum: FILE_LINK_TTL.max, description: 'Seconds the URL stays valid (default PLATFORM_FILE_LINK_TTL_SECONDS).' })) },
  { additionalProperties: false },
);
export const PresignedUrl = data(
  Type.Object({ id: Type.String(), url: Type.String({ format: 'uri', description: 'Fetches the file without a credential until it expires.' }), expires_at: Timestamp('When the URL stops working') }),
  'A new presigned URL of the file.',
);
export const FileContentQuery = Type.Object({
  account_id: Type.Optional(Type.String({ maxLength: 100 })),
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  signature: Type.Optional(Type.String({ maxLength: 100 })),
});

// Agents' home directories ------------------------------------------------------------------------------------

export const HomeQuery = Type.Object({
  path: Type.Optional(Type.String({ maxLength: 1024, pattern: PATTERNS.noNul.pattern, default: '', description: 'Relative to the home directory, `/` between names; empty for the root.' })),
  principal_id: Type.Optional(Uuid("Whose home on this agent (admins and owners); the caller's own by default.")),
});
export const HomeAgentPath = Type.Object({ agent_id: Uuid('The agent id.') });
const HomeEntrySchema = Type.Object({
  name: Type.String(),
  type: Type.String({ enum: ['file', 'directory'] }),
  size: Type.Integer({ minimum: 0, description: 'Bytes (0 for a directory).' }),
  modified_at: Timestamp('Last modified'),
});
export const HomeListing = data(
  Type.Object({
    principal_id: Type.String({ description: 'Whose home this is.' }),
    path: Type.String({ description: 'The directory, relative to the home (`.` for the root).' }),
    entries: Type.Array(HomeEntrySchema, { description: `Directories first, then files, by name; at most ${HOME_LIST_LIMIT}.` }),
    truncated: Type.Boolean({ description: `True when the directory holds more than ${HOME_LIST_LIMIT} entries.` }),
  }),
  'A directory of the home.',
);
export const HomeQuota = data(
  Type.Object({
    principal_id: Type.String(),
    used_bytes: Type.Integer({ minimum: 0 }),
    limit_bytes: Type.Integer({ minimum: 0 }),
    entries: Type.Integer({ minimum: 0, description: 'Files and directories.' }),
    limit_entries: Type.Integer({ minimum: 0 }),
    max_file_bytes: Type.Integer({ minimum: 0, description: 'The largest one file may be.' }),
  }),
  "What the agent's home directory holds against its limits.",
);

// Agents' journals ---------------------------------------------------------------------------------------------

const JournalEntrySchema = Type.Object(
  {
    id: Uuid('The entry id.'),
    kind: Type.String({ enum: [...JOURNAL_KINDS], description: 'What the agent did, decided, should remember, or a note.' }),
    content: Type.String(),
    tags: Type.Array(Type.String()),
    context_id: Nullable(Type.String({ description: 'The thread (A2A contextId) it was written in.' })),
    task_id: Nullable(Type.String({ description: 'The A2A task it was written in.' })),
    created_at: Timestamp('When it was written'),
    rank: Type.Optional(Type.Number({ description: 'Full-text rank, with `q` only.' })),
  },
  { $id: 'JournalEntry', description: "An entry of an agent's journal for one user (the Journal built-in)." },
);
export const JournalQuery = Type.Object({
  principal_id: Type.Optional(Uuid("Whose journal on this agent (admins and owners); the caller's own by default.")),
  context_id: Type.Optional(Text(200, 'Only the entries written in this thread.')),
  kind: Type.Optional(Type.String({ enum: [...JOURNAL_KINDS] })),
  q: Type.Optional(Text(1000, 'Full-text query (words, "a phrase", or, -word): best matches first, one page.')),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Entries written at or after this time.' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Entries written before this time.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: JOURNAL_LIMITS.read, default: DEFAULT_LIMIT, description: 'Page size.' })),
  cursor: Type.Optional(Text(300, 'Where the previous page ended (its `next_cursor`); not with `q`.')),
});
export const JournalList = data(
  Type.Object({
    principal_id: Type.String({ description: 'Whose journal this is.' }),
    entries: Type.Array(component(JournalEntrySchema)),
    next_cursor: Nullable(Type.String({ description: 'The next (older) page, or null on the last (always null with `q`).' })),
  }),
  'One page of the journal, newest first (best matches first with `q`).',
);
export const JournalEntryPath = Type.Object({ agent_id: Uuid('The agent id.'), entry_id: Uuid('The entry id.') });
export const JournalEntryQuery = Type.Object({ principal_id: Type.Optional(Uuid("Whose journal (admins and owners); the caller's own by default.")) });

// Identity links -----------------------------------------------------------------------------------------------

const Provider = Type.String({ pattern: PROVIDER_PATTERN, description: 'Where the identity lives: lowercase letters, digits, `.`, `_`, `-` (e.g. `slack`, `github`).' });
const ExternalId = Type.String({ minLength: 1, maxLength: IDENTITY_LIMITS.externalId, pattern: PATTERNS.noNul.pattern, description: "The identity's id there." });
const IdentityLinkSchema = Type.Object(
  {
    provider: Type.String(),
    external_id: Type.String(),
    principal_id: Type.String({ description: 'The platform principal it is linked to.' }),
    display_name: Nullable(Type.String()),
    linked_at: Timestamp('When it was linked'),
  },
  { $id: 'IdentityLink', description: 'An identity outside the platform, linked to a principal.' },
);
export type IdentityLinkWire = Static<typeof IdentityLinkSchema>;
export const LinkCodeBody = Type.Object(
  { provider: Provider, external_id: ExternalId, display_name: Type.Optional(Text(IDENTITY_LIMITS.displayName, 'How the identity is shown.')) },
  { additionalProperties: false },
);
export const LinkCode = data(
  Type.Object({ code: Type.String({ description: 'Show it to the person; they post it to `POST /v1/identity/verify`. Single use.' }), provider: Type.String(), external_id: Type.String(), expires_at: Timestamp('When the code stops working') }),
  'A one-time link code.',
);
export const VerifyBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 32, pattern: PATTERNS.noNul.pattern, description: 'The link code (`XXXX-XXXX`; case and separators do not matter).' }) }, { additionalProperties: false });
export const OneLink = data(component(IdentityLinkSchema), 'The identity is now linked to the caller.');
export const LinkQuery = Type.Object({
  provider: Type.Optional(Provider),
  external_id: Type.Optional(ExternalId),
  principal_id: Type.Optional(Uuid("A principal's links (service principals, admins and owners).")),
});
export const LinkList = data(Type.Object({ links: Type.Array(component(IdentityLinkSchema)) }), 'Linked identities.');

export const FILES_COMPONENTS = [AttachmentSchema, IdentityLinkSchema, JournalEntrySchema];
