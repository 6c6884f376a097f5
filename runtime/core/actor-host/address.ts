/** Actor addresses are `kind/accountId/id`; platform-level actors (not owned by a tenant) use the account `platform`. */
export const PLATFORM_ACCOUNT = 'platform';
export const SHARD_COUNT = 256;

export interface ActorAddress {
  kind: string;
  accountId: string;
  id: string;
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_:-]*$/;

export function formatAddress(a: ActorAddress): string {
  for (const part of [a.kind, a.accountId, a.id]) {
    if (!SEGMENT.test(part)) throw new Error(`invalid actor address segment ${JSON.stringify(part)}`);
  }
  return `${a.kind}/${a.accountId}/${a.id}`;
}

export function parseAddress(address: string): ActorAddress {
  const parts = address.split('/');
  if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p))) {
    throw new Error(`invalid actor address ${JSON.stringify(address)}`);
  }
  return { kind: parts[0]!, accountId: parts[1]!, id: parts[2]! };
}

/** FNV-1a over the address: stable across processes and releases, so every node agrees on a shard. */
export function shardOf(address: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < address.length; i++) {
    h ^= address.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % SHARD_COUNT;
}
