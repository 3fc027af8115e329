-- The node each replica ran on (the `stuck` analysis), where a label of the running-requests
-- gauge ($name, e.g. vllm:num_requests_running) names one: per value of the replica label
-- $replica_label, the values of the first present of the node labels $node_1, $node_2,
-- $node_3 (in that order), sorted.
-- params: name, replica_label, node_1, node_2, node_3
select labels[$replica_label] as replica,
       list_sort(list_distinct(list(coalesce(labels[$node_1], labels[$node_2], labels[$node_3]))
                               filter (where coalesce(labels[$node_1], labels[$node_2],
                                                      labels[$node_3]) is not null))) as nodes
from metric_samples
where name = $name and labels[$replica_label] is not null
group by all
order by replica
