-- Append a batch of rows from a Python reader (relplan/ingest/stage.py's StageWriter, fewer
-- than BATCH_ROWS rows) to stage_metrics: one list parameter per column, the rows in the same
-- order in each (a MAP column as two: each row's keys and its values).
-- params: source_id, ln, raw, perr, t, name, labels_keys, labels_values, value
insert into stage_metrics by name
select
    unnest($source_id) as source_id,
    unnest($ln) as ln,
    unnest($raw) as raw,
    unnest($perr) as perr,
    unnest($t) as t,
    unnest($name) as name,
    map(unnest($labels_keys), unnest($labels_values)) as labels,
    unnest($value) as value
