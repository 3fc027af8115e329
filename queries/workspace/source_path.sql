-- One source's path (to name it in an error).
-- params: source_id
select path from sources where source_id = $source_id
