-- dcgm-exporter's Xid and row-remap gauges per node and GPU in the window (widened by
-- $margin_s): DCGM_FI_DEV_XID_ERRORS holds the LAST Xid code (not a count),
-- DCGM_FI_DEV_ROW_REMAP_FAILURE is 1 once row remapping has failed.
-- params: t_from, t_to, margin_s
select
    name,
    t,
    value,
    coalesce(labels['Hostname'], labels['instance']) as node,
    labels['gpu'] as gpu,
    coalesce(labels['exported_pod'], labels['pod']) as pod,
    labels['err_code'] as err_code
from metric_samples
where name in ('DCGM_FI_DEV_XID_ERRORS', 'DCGM_FI_DEV_ROW_REMAP_FAILURE')
    and t >= $t_from - $margin_s
    and t <= $t_to + $margin_s
order by name, node, gpu, t
