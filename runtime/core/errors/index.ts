export { ERRORS, ERROR_KINDS, type ErrorCode, type ErrorKind, type ErrorSpec } from './codes.ts';
export { PlatformError, isPlatformError, isErrorCode, fromWire, asPlatformError, type WireError } from './platform-error.ts';
