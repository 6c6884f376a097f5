export * from './roles.ts';
export * from './tokens.ts';
export * from './api-keys.ts';
export * from './authenticate.ts';
export * from './agent-tokens.ts';
export * from './agent-admission.ts';
export * from './device-flow.ts';
export { hashPassword, verifyPassword, normalizeUserCode, randomSecret, sha256 } from './secrets.ts';
export * from './identity-links.ts';
