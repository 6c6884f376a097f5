import type { Role } from '../../store/index.ts';

/**
 * Roles grant authorities. read: list and inspect; execute: run tools and agents; write: change what the account
 * hosts (upload plugins, set policies). An API key carries its principal's full authority.
 */
export type Authority = 'read' | 'execute' | 'write';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

export const ROLE_AUTHORITIES: Record<Role, readonly Authority[]> = {
  owner: ['read', 'execute', 'write'],
  admin: ['read', 'execute', 'write'],
  member: ['read', 'execute'],
  viewer: ['read'],
};

export function hasAuthority(role: Role | null, authority: Authority): boolean {
  return role !== null && ROLE_AUTHORITIES[role].includes(authority);
}

export function isRole(s: string): s is Role {
  return (ROLES as readonly string[]).includes(s);
}
