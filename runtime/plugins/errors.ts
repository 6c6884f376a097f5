/** Stable codes of plugin admission; the upload route maps every one of them to 400 with its message. */
export type PluginErrorCode =
  | 'PLUGIN_ARCHIVE_NOT_GZIP'
  | 'PLUGIN_ARCHIVE_NOT_TAR'
  | 'PLUGIN_ARCHIVE_TRUNCATED'
  | 'PLUGIN_ARCHIVE_TOO_LARGE'
  | 'PLUGIN_ARCHIVE_TOO_MANY_ENTRIES'
  | 'PLUGIN_ARCHIVE_ENTRY_TOO_LARGE'
  | 'PLUGIN_ARCHIVE_NO_WASM'
  | 'PLUGIN_CONFIG_INVALID'
  | 'PLUGIN_WASM_INVALID';

export class PluginError extends Error {
  override readonly name = 'PluginError';
  constructor(
    readonly code: PluginErrorCode,
    message: string,
    /** For an invalid config: one entry per problem, each naming its path. */
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}
