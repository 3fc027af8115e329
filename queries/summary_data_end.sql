-- T, the end of the data (analyses.md conventions 1): the latest proxy or engine timestamp
-- (the caller takes the later of this and the last phase end).
-- params:
select greatest(
    (select max(greatest(t_sent, t_end)) from summary_proxy),
    (select max(t) from summary_events),
    (select max(t_done) from summary_steps)
) as t_last
