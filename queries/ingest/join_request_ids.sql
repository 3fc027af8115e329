-- Join gateway attempts to the vLLM executions they became (docs/formats.md, "Joining gateway
-- attempts to vLLM executions"): an attempt whose execution_id is still the X-Request-Id the
-- gateway sent upstream takes the execution id vLLM derived from it (request_ids.client_id:
-- `cmpl-<id>-0-<8 hex>`, `chatcmpl-<id>-<8 hex>`). Several executions of one X-Request-Id (a
-- gateway retrying upstream with the same header) pair with that id's attempts in time order.
-- Runs after every ingest, so either file may come first; an id vLLM never logged stays.
-- params:
update attempts set execution_id = m.new_id
from (
    with arrivals as (
        select execution_id, min(t) as t from events where event = 'arrived' group by all
    ),
    ids as (
        select
            r.execution_id, r.client_id,
            row_number() over (
                partition by r.client_id order by v.t nulls last, r.source_id, r.source_row
            ) as k
        from request_ids r left join arrivals v using (execution_id)
        where r.client_id is not null
    ),
    att as (
        select
            a.rowid as rid, a.execution_id as cid,
            row_number() over (
                partition by a.execution_id order by a.t_sent, a.call_id, a.attempt
            ) as k
        from attempts a
        where a.execution_id in (select client_id from ids)
          and not exists (select 1 from events e where e.execution_id = a.execution_id)
    )
    select att.rid, ids.execution_id as new_id
    from att join ids on ids.client_id = att.cid and ids.k = att.k
) m
where attempts.rowid = m.rid
