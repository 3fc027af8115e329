-- Record the schema version the workspace's tables follow: a workspace opened for writing has
-- just had queries/schema.sql run on it, so it follows this relplan's version (an older one is
-- migrated by that; relplan.workspace.MIGRATES_FROM).
-- params: version
insert into relplan_meta (key, value) values ('schema_version', $version)
on conflict (key) do update set value = excluded.value
