-- A replay's proxy log into `attempts`, as `relplan ingest` stores the same records from
-- proxy.parquet (ingest/insert_attempts.sql): `replay_proxy` is the simulator's frame
-- (relplan/sim/writer.py proxy_frame) registered on the replay's in-memory workspace, with
-- `ln` its 1-based row number. The simulator writes every attempt with t_planned and
-- attached, so nothing is filled in. tests/test_whatif_load.py holds the two paths equal.
-- params: source_id
insert into attempts
select
    call_id, attempt::integer, t_planned, t_sent, t_end, outcome, execution_id, attached,
    t_cancel, status::integer, model, replica, prompt_tokens, max_tokens, $source_id, ln
from replay_proxy
