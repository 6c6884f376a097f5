import { formatAddress } from '../core/actor-host/index.ts';

/** The Account actor of an account: one per tenant, keyed by the account id. */
export const accountAddress = (accountId: string) => formatAddress({ kind: 'account', accountId, id: accountId });
