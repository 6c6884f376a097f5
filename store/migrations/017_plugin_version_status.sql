-- A plugin version's lifecycle as its PluginVersion actor projects it (dormant, activating, active, superseded), the
-- reason of its last failed activation, and what the activation that flipped it recorded (so a resumed activation
-- that already flipped does not flip again).
alter table capability_versions add column status text not null default 'dormant';
alter table capability_versions add column status_reason text;
alter table capability_versions add column activation_key text;
alter table capability_versions add column activated_from integer;
update capability_versions v set status = case
    when c.active_version = v.version_number then 'active'
    when v.artifact_hash is not null then 'superseded'
    else 'dormant' end
  from capabilities c where c.id = v.capability_id and c.account_id = v.account_id;
