-- Measured inputs for `relplan budget --from-db`: mean stream duration d and mean concurrent
-- streams per replica K, from the proxy attempts log.
-- A stream is an attempt the proxy did not shed (delivered, client_gone or error): a crash
-- kills the client connections in flight, attached ones included. d is their mean duration
-- (t_end - t_sent); K follows from Little's law: total stream-seconds over the log's span
-- (first t_sent to last t_end) divided by the number of replicas seen (at least 1; attempts
-- without a replica count as one unnamed replica).
-- params:
with streams as (
    select t_sent, t_end, coalesce(replica, '') as replica
    from attempts
    where outcome <> 'shed'
)
select
    count(*) as streams,
    avg(t_end - t_sent) as mean_stream_seconds,
    sum(t_end - t_sent) as stream_seconds_total,
    max(t_end) - min(t_sent) as span_seconds,
    greatest(count(distinct replica), 1) as replicas_seen
from streams
