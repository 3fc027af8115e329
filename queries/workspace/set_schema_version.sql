-- Record the schema version the workspace's tables follow (kept when already recorded).
-- params: version
insert into relplan_meta (key, value) values ('schema_version', $version) on conflict do nothing
