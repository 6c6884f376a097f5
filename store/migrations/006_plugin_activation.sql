-- The compiled artifacts of an activated version: the hash of its manifest (artifact name -> content hash).
alter table capability_versions add column artifact_hash text references plugin_blobs(hash);
