-- The earliest time any source of the workspace records (relplan.workspace.attached reads
-- --from/--to given as seconds from t0 against it).
-- params:
select min(t_min) as t_min from sources
