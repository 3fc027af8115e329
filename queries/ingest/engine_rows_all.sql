-- The engine rows to store when the checks refused none of this ingest's records: the
-- inserts then skip evaluating the reasons again.
-- params:
create or replace temp view engine_rows as select * from engine_typed
