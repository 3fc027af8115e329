-- Which restart inputs the workspace holds: pod events in kube_events and samples of the
-- kube-state-metrics restart counter.
-- params:
select
    (select count(*) from kube_events where coalesce(object_kind, 'Pod') = 'Pod') as pod_events,
    (
        select count(*) from metric_samples
        where name = 'kube_pod_container_status_restarts_total'
    ) as restart_samples
