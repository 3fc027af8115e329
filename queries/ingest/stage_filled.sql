-- Which staging tables hold at least one row: the driver creates the checking views, and runs
-- the summaries and inserts, only for those (relplan/ingest/stage.py, CHECKS).
-- params:
select
    exists (select 1 from stage_proxy) as stage_proxy,
    exists (select 1 from stage_engine) as stage_engine,
    exists (select 1 from stage_metrics) as stage_metrics
