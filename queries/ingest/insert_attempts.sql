-- Store the checked proxy attempts that passed (reason IS NULL) of this ingest.
-- params:
insert into attempts
select
    call_id, attempt::integer, t_planned_filled, t_sent, t_end, outcome, execution_id,
    coalesce(attached, false), t_cancel, status::integer, model, replica, prompt_tokens::bigint,
    max_tokens::bigint, source_id, ln
from proxy_checked
where reason is null
