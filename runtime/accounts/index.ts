export { accountAddress } from './account-address.ts';
export { createBilling, BILLING_WAIT_MS, LEASE_CALLS, type Billing, type BillingState } from './billing.ts';
export { createAccountStatus, ACCOUNT_STATUS_TTL_MS, type AccountStatus } from './account-status.ts';
