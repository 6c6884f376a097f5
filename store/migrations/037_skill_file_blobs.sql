-- A skill's files move to the blob store (by SHA-256): a bundle of 512 KiB as bytea parameters held PGlite's thread,
-- which is the node's, for about 60 ms per write or read (measured). Rows written before this keep their bytes inline.
alter table skill_files alter column content drop not null;
alter table skill_files add column sha256 text;
alter table skill_files add column size integer;
update skill_files set size = length(content) where size is null;
alter table skill_files alter column size set not null;
