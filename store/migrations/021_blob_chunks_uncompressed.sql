-- Blob chunks hold components and compiled modules, compressed already or not worth the server's CPU: PostgreSQL
-- stores them out of line without trying to compress each one (measured: compressing 28 MiB of chunks competed with
-- other tenants' queries for the cores of a small machine).
alter table blob_chunks alter column bytes set storage external;
