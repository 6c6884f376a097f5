export * from './roles.ts';
export * from './tokens.ts';
export * from './api-keys.ts';
export * from './authenticate.ts';
export * from './device-flow.ts';
export * from './admin.ts';
export * from './demo-seed.ts';
export { hashPassword, verifyPassword, normalizeUserCode, randomSecret as randomSecretForSetting } from './secrets.ts';
