-- Loads a simulator run.json (formats.md section 5) into the workspace's manifests table.
-- params: source_id, name, capacity, deadline, window, overload_phase, t0, notes, manifest
insert into manifests
values ($source_id, $name, $capacity, $deadline, $window, $overload_phase, $t0, $notes,
        $manifest)
