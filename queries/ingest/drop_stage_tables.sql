-- Drop the staging tables and the checked attempts made from them (end of an ingest
-- transaction, before it commits).
-- params:
drop table if exists proxy_checked;
drop table if exists stage_proxy;
drop table if exists stage_engine;
drop table if exists stage_direct_engine;
drop table if exists stage_metrics;
drop table if exists stage_sources;
