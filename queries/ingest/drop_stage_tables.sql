-- Drop the staging tables (end of an ingest transaction, before it commits).
-- params:
drop table if exists stage_proxy;
drop table if exists stage_engine;
drop table if exists stage_direct_engine;
drop table if exists stage_metrics;
drop table if exists stage_sources;
