import { Type, type Static } from 'typebox';
import { BUILD_SOURCE_LIMITS } from '../../runtime/index.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, Text, Timestamp, Uuid } from './schemas.ts';
import { PATTERNS } from './validation.ts';

/** Wire shapes of the plugin build routes (spec §1 Plugin builds; docs/plugin-builds.md). */

export const BuildSchema = Type.Object(
  {
    id: Uuid('The build id.'),
    name: Type.String({ description: 'The plugin it builds (a new plugin, or the next version of the one of that name).' }),
    description: Type.String(),
    owner_id: Type.String(),
    status: Type.String({ enum: ['queued', 'building', 'succeeded', 'failed', 'canceled'] }),
    capability_id: Type.Union([Type.String(), Type.Null()], { description: 'The plugin, once registered.' }),
    version: Type.Union([Type.Integer(), Type.Null()], { description: 'The version registered; it then activates itself (follow it with `GET /v1/capabilities/{id}`).' }),
    logs: Type.String({ description: "What the build printed (its last 16 KiB)." }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed or was canceled.' }),
    created_at: Timestamp('When it was asked for'),
    updated_at: Timestamp('When it last moved'),
  },
  { $id: 'PluginBuild', description: 'A build of a plugin from JavaScript source (componentize-js).' },
);
export type BuildWire = Static<typeof BuildSchema>;

export const BuildBody = Type.Object(
  {
    name: Type.String({ minLength: 2, maxLength: 64, pattern: '^[a-z][a-z0-9-]*[a-z0-9]$', description: 'The plugin: lowercase letters, digits and hyphens.' }),
    description: Type.Optional(Text(1000, 'What the plugin does (its platform.yaml description when no config is given).')),
    source: Type.String({ minLength: 1, maxLength: BUILD_SOURCE_LIMITS.sourceBytes, pattern: PATTERNS.noNul.pattern, description: 'The JavaScript module: it exports the functions of the world.' }),
    wit: Type.String({ minLength: 1, maxLength: BUILD_SOURCE_LIMITS.witBytes, pattern: PATTERNS.noNul.pattern, description: 'WIT that declares the world (WASI 0.2 packages may be imported).' }),
    world: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9-]*$', description: 'The world the source implements.' }),
    config: Type.Optional(Type.String({ maxLength: BUILD_SOURCE_LIMITS.configBytes, pattern: PATTERNS.noNul.pattern, description: "platform.yaml (permissions, resources); a minimal one when omitted." })),
  },
  { additionalProperties: false },
);
export const BuildPath = Type.Object({ id: Uuid('The build id.') });
export const BuildListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size.' })),
  cursor: Type.Optional(Text(300, 'Where the previous page ended (its `next_cursor`).')),
});

export const BUILD_COMPONENTS = [BuildSchema];
