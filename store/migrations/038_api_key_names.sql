-- An API key may carry a name, so the operator lists and revokes keys by name (`platform admin key revoke ci --account
-- acme`). A name is unique among the account's keys that are not revoked: a name then resolves to at most one key, and
-- once a key is revoked its name can be given to the key that replaces it.
alter table api_keys add column name text;
create unique index api_keys_live_name_key on api_keys (account_id, name) where name is not null and revoked_at is null;
