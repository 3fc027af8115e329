-- Every Kubernetes event object of one file in one statement (relplan/ingest/cluster/kube_events.py
-- registers them as the Arrow batch _relplan_kube_events).
-- params:
insert into kube_events
select t_first, t_last, count, reason, type, message, object_kind, namespace, object_name,
       container, node, component, source_id, source_row
from _relplan_kube_events
