-- Set a source's stored row count (after its attempts were dropped as a whole-second twin).
-- params: source_id, rows
update sources set rows = $rows where source_id = $source_id
