-- Consent-page tickets are single use: a ticket's id is recorded when the form is posted, until the ticket expires.
create table oauth_used_tickets (
  jti text primary key,
  expires_at timestamptz not null
);
create index oauth_used_tickets_expiry_idx on oauth_used_tickets (expires_at);
-- Expired codes and refresh tokens are purged by the nodes' housekeeping.
create index oauth_codes_expiry_idx on oauth_codes (expires_at);
create index oauth_refresh_expiry_idx on oauth_refresh_tokens (expires_at);
