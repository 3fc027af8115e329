-- Drop one source's staged proxy records (before it is read again another way).
-- params: source_id
delete from stage_proxy where source_id = $source_id
