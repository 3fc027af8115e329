-- Drop one source's rows from the typed reader's table (before the file is read another way,
-- or when its content is already stored).
-- params: source_id
delete from stage_direct_engine where source_id = $source_id
