-- Join gateway attempts to the vLLM executions they became (docs/formats.md, "Joining gateway
-- attempts to vLLM executions"): an attempt whose execution_id is still the X-Request-Id the
-- gateway sent upstream takes the execution id vLLM derived from it (request_ids.client_id:
-- `cmpl-<id>-0-<8 hex>`, `chatcmpl-<id>-<8 hex>`). Several executions of one X-Request-Id (a
-- gateway retrying upstream with the same header) pair with that id's attempts in time order,
-- counted from the last: with fewer executions than attempts, the tries that never reached
-- vLLM are the early ones (nginx moves on from a refused connection; the try whose answer the
-- client got is the last), as recorded in tests/data/lab/issue23-forms.
-- An attempt may instead hold the id vLLM's response carried (load-test tools record it:
-- GuideLLM's `response_id`): the external id itself (`chatcmpl-<id>`), or for completions the
-- external id without its prompt index (`cmpl-<id>` for `cmpl-<id>-0`); it joins the same way.
-- Runs after every ingest, so either file may come first; an id vLLM never logged stays.
-- params:
update attempts set execution_id = m.new_id
from (
    with arrivals as (
        select execution_id, min(t) as t from events where event = 'arrived' group by all
    ),
    keyed as (
        select distinct r.execution_id, r.source_id, r.source_row, u.key
        from request_ids r,
             unnest([
                 r.client_id,
                 r.external_id,
                 case when r.external_id like 'cmpl-%'
                      then regexp_replace(r.external_id, '-[0-9]+$', '') end
             ]) as u(key)
        where u.key is not null
    ),
    ids as (
        select
            r.execution_id, r.key as client_id,
            row_number() over (
                partition by r.key
                order by v.t desc nulls first, r.source_id desc, r.source_row desc
            ) as k
        from keyed r left join arrivals v using (execution_id)
    ),
    att as (
        select
            a.rowid as rid, a.execution_id as cid,
            row_number() over (
                partition by a.execution_id
                order by a.t_sent desc, a.call_id desc, a.attempt desc
            ) as k
        from attempts a
        where a.execution_id in (select client_id from ids)
          and not exists (select 1 from events e where e.execution_id = a.execution_id)
    )
    select att.rid, ids.execution_id as new_id
    from att join ids on ids.client_id = att.cid and ids.k = att.k
) m
where attempts.rowid = m.rid
