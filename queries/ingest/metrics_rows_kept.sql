-- The metrics rows to store when some records were refused (skip mode): those that passed.
-- params:
create or replace temp view metrics_rows as select * exclude (reason) from metrics_checked where reason is null
