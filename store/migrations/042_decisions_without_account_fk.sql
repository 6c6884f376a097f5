-- The autonomy decision record without its foreign key to accounts. Every tool call writes a row here, and the key's
-- check runs once per row: on the embedded database it was a fifth of a row's cost (about 15 of 75-90 µs per row,
-- measured on a batch of 70 with the table's three indexes), paid on the thread every query of the node shares. A row's
-- account is always the account of the caller that was just admitted, and accounts are never deleted, so the key
-- guarded nothing the writer does not already guarantee. Reads stay scoped by account_id and its indexes stay.
alter table autonomy_decisions drop constraint if exists autonomy_decisions_account_id_fkey;
