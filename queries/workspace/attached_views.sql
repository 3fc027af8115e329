-- The engine tables of a workspace with an attachment, as temporary views of the same
-- names: the stored rows UNION ALL BY NAME the attachment's (workspace/attached_macros.sql;
-- workspace/set_attached_stored.sql names the stored tables and the attachment).
-- params:
create or replace temp view steps as
    select * from query_table(getvariable('rp_stored').steps)
    union all by name select * from rp_attached_steps(getvariable('rp_stored').sid);
create or replace temp view events as
    select * from query_table(getvariable('rp_stored').events)
    union all by name select * from rp_attached_events(getvariable('rp_stored').sid);
create or replace temp view engine_stats as
    select * from query_table(getvariable('rp_stored').engine_stats)
    union all by name select * from rp_attached_stats(getvariable('rp_stored').sid);
