-- The engine rows to store when some records were refused (skip mode): those that passed.
-- params:
create or replace temp view engine_rows as select * exclude (reason) from engine_checked where reason is null
