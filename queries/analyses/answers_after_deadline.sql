-- Attempts the gateway logged as delivered that answered after the client's deadline D
-- (t_end - t_sent > D): no client received them (the verdict's evidence; an answer after D
-- is not a delivery, whatever status the gateway logged), and the calls left with no
-- delivery because of it.
-- Columns: attempts_late, calls_only_late.
-- params: deadline_s
with a as (
    select call_id, outcome = 'delivered' and t_end - t_sent > $deadline_s as late,
           outcome = 'delivered' and t_end - t_sent <= $deadline_s as ok
    from attempts
)
select count(*) filter (where late) as attempts_late,
       (select count(*) from (select call_id from a group by call_id
                              having bool_or(late) and not bool_or(ok))) as calls_only_late
from a
