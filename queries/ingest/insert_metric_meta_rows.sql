-- The # TYPE / # HELP / # UNIT of many metric families at once (one INSERT instead of one per
-- family): a list of structs named as metric_meta's columns (relplan/ingest/metrics/text.py,
-- meta_store).
-- params: rows
insert into metric_meta by name select r.* from (select unnest($rows) as r)
