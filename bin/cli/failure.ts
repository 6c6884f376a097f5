import { ConfigError } from '../../runtime/core/config/index.ts';
import { CommandError, UsageError } from './output.ts';

/** How a command that failed ends: the exit code, the line(s) for standard error, and the `--json` document. */
export interface Failure {
  exitCode: 1 | 2;
  message: string;
  code: string;
}

const PARSE_ERRORS = new Set(['ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE', 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL']);
/** Errors of reaching a node: the node is not running there, or the address is wrong. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET']);
/** A TLS node whose certificate this machine does not trust (a dev CA not yet trusted), or a name it does not cover. */
const UNTRUSTED = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID']);
/** Errors of reading or writing a file the user named. */
const FILE_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory (a file was expected)',
  ENOTDIR: 'not a directory',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
};

type Coded = Error & { code?: string; path?: string; address?: string; port?: number; cause?: unknown };

const codeOf = (err: unknown): Coded | null => {
  for (let e = err as Coded | undefined, depth = 0; e && depth < 4; e = e.cause as Coded | undefined, depth++) {
    if (typeof e.code === 'string' && (UNREACHABLE.has(e.code) || UNTRUSTED.has(e.code) || e.code in FILE_ERRORS)) return e;
  }
  return null;
};

/**
 * An ordinary mistake (a usage error, a missing file, a node that is not running) is told in one line; only an
 * error nobody expected shows its stack, and then only with PLATFORM_DEBUG=1 (it is a bug to report).
 */
export function describeFailure(err: unknown, command: string | undefined, env: NodeJS.ProcessEnv = process.env): Failure {
  const e = err as Coded;
  if (err instanceof UsageError || PARSE_ERRORS.has(e?.code ?? '')) {
    // A usage error that lists the usage already needs no pointer to it.
    const hint = e.message.includes('\n  platform ') || e.message.includes('usage:') ? '' : `\n(platform ${command && /^[a-z-]+$/.test(command) ? `${command} ` : ''}--help shows the usage)`;
    return { exitCode: 2, code: 'USAGE', message: `${e.message}${hint}` };
  }
  // By name too: compiled ahead of time (bin/compile-cli.ts), the CLI holds its own copy of the config module while a
  // command that loads the runtime through tsx (serve) throws the runtime's, another class of the same name.
  if (err instanceof ConfigError || (err instanceof Error && err.name === 'ConfigError')) return { exitCode: 2, code: 'CONFIG', message: e.message };
  if (err instanceof CommandError) return { exitCode: 1, code: err.code, message: `error: ${err.message}` };
  const sys = codeOf(err);
  if (sys && UNREACHABLE.has(sys.code!)) {
    const where = sys.address ? ` at ${sys.address}${sys.port ? `:${sys.port}` : ''}` : '';
    return {
      exitCode: 1,
      code: 'NODE_UNREACHABLE',
      message: `error: no platform node answers${where} (${sys.code}): start one with \`npm start\`, or name a running one with --api-url URL or PLATFORM_API_URL`,
    };
  }
  if (sys && UNTRUSTED.has(sys.code!)) {
    return {
      exitCode: 1,
      code: 'NODE_UNTRUSTED',
      message: `error: the node's certificate is not trusted here (${sys.code}): trust the CA that signed it (platform dev-cert prints how; for Node clients NODE_EXTRA_CA_CERTS=<ca.pem>), see docs/https.md`,
    };
  }
  if (sys) return { exitCode: 1, code: 'FILE_ERROR', message: `error: ${sys.path ?? 'a file'}: ${FILE_ERRORS[sys.code!]}` };
  const stack = env.PLATFORM_DEBUG === '1' || env.PLATFORM_DEBUG === 'true';
  return {
    exitCode: 1,
    code: 'INTERNAL',
    message: `error: ${stack ? (e?.stack ?? String(err)) : (e?.message ?? String(err))}${stack ? '' : '\n(an unexpected error: PLATFORM_DEBUG=1 shows where it happened)'}`,
  };
}
