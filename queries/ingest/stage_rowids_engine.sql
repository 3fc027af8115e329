-- Rowid range and count of one source's staged engine rows (is the fast reader's order usable?).
-- params: source_id
select min(rowid), max(rowid), count(*) from stage_engine where source_id = $source_id
