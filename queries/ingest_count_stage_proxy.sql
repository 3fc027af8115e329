-- How many proxy records one source staged.
-- params: source_id
select count(*) from stage_proxy where source_id = $source_id
