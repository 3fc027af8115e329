-- One Kubernetes event object (relplan/ingest/cluster/kube_events.py).
-- params: t_first, t_last, count, reason, type, message, object_kind, namespace, object_name, container, node, component, source_id, source_row
insert into kube_events values (
    $t_first, $t_last, $count, $reason, $type, $message, $object_kind, $namespace, $object_name,
    $container, $node, $component, $source_id, $source_row
)
