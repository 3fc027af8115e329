-- Samples of the pod-level restart, readiness and probe metrics (kube-state-metrics, kubelet
-- /metrics/probes) from $margin_s before the window to $margin_s after it, with the labels the
-- restart analysis reads. A ServiceMonitor without honor_labels renames the exporter's own
-- pod/namespace/container labels to exported_*: those win when present.
-- params: t_from, t_to, margin_s
select
    name,
    t,
    value,
    coalesce(labels['exported_namespace'], labels['namespace']) as namespace,
    coalesce(labels['exported_pod'], labels['pod']) as pod,
    coalesce(labels['exported_container'], labels['container']) as container,
    labels['reason'] as reason,
    labels['probe_type'] as probe_type,
    labels['result'] as result,
    labels['condition'] as condition,
    labels['node'] as node,
    labels['pod_ip'] as pod_ip
from metric_samples
where name in (
        'kube_pod_container_status_restarts_total',
        'kube_pod_container_status_last_terminated_reason',
        'kube_pod_container_status_last_terminated_timestamp',
        'kube_pod_container_status_waiting_reason',
        'kube_pod_container_status_ready',
        'kube_pod_status_ready',
        'kube_pod_info',
        'prober_probe_total'
    )
    and t >= $t_from - $margin_s
    and t <= $t_to + $margin_s
    and coalesce(labels['exported_pod'], labels['pod']) is not null
order by name, namespace, pod, container, reason, probe_type, result, condition, t
