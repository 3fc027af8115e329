-- Rowid range and count of one source's staged proxy rows (is the fast reader's order usable?).
-- params: source_id
select min(rowid) as first_rowid, max(rowid) as last_rowid, count(*) as n from stage_proxy where source_id = $source_id
