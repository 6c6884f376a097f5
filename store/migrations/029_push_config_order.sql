-- A task's push configs in creation order: a sequence, not `created_at`, which two inserts may share (microsecond
-- clock), so paging and delivery follow the order configs were made in, always.
alter table push_configs add column seq bigserial;
