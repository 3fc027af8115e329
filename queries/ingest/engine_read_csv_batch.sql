-- Engine records from one Arrow batch of a CSV file read in Python (relplan/ingest/canonical/csv_rows.py,
-- registered as _relplan_csv_batch): `_ln` the record's first physical line, `_raw` the row as
-- JSON (skip mode, else NULL), then the known columns as text. Columns the batch lacks are
-- NULL (rp_engine_template); the typed columns and conversion errors come from rp_engine_typed /
-- rp_engine_perr (ingest/engine_macros.sql), as in every canonical reader.
-- params: source_id
insert into stage_engine
select $source_id, _ln, _raw, rp_engine_perr(src), 'canonical', unnest(rp_engine_typed(src))
from (
    select * from rp_engine_template() union all by name select * from _relplan_csv_batch
) as src
