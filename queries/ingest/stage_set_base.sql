-- Record the rowid of a source's first staged row: its line numbers are rowid - base + 1.
-- params: source_id, base
update stage_sources set base = $base where source_id = $source_id
