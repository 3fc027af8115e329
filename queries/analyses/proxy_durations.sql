-- Whether the gateway log gives attempts a duration: a log without one (nginx's `combined`
-- format has no $request_time) places every attempt at its end with zero length, and then
-- neither the time to delivery, the on-time share nor the client deadline can be read from it.
-- Columns: attempts, timed (attempts with t_end > t_sent).
-- params:
select count(*) as attempts, count(*) filter (where t_end > t_sent) as timed from attempts
