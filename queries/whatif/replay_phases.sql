-- A replay's run.json phases (relplan/whatif/replay.py `load_measured`), one row per list
-- element in order, as ingest/insert_phase.sql stores each.
-- params: source_id, names, starts, ends
insert into phases
select $source_id, unnest($names::varchar[]), unnest($starts::double[]), unnest($ends::double[])
