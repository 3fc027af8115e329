-- The Kubernetes events about pods that the restart analysis reads (probe failures, kills,
-- back-offs, starts), overlapping the window widened by $margin_s on each side.
-- params: t_from, t_to, margin_s
select
    t_first, t_last, count, reason, message, namespace, object_name as pod, container, node
from kube_events
where coalesce(object_kind, 'Pod') = 'Pod'
    and object_name is not null
    and reason in ('Unhealthy', 'Killing', 'BackOff', 'Started')
    and t_last >= $t_from - $margin_s
    and t_first <= $t_to + $margin_s
order by t_first, pod, source_id, source_row
