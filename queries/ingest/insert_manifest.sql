-- One run manifest (run.json), its modelled fields and the whole document.
-- params: source_id, name, capacity, deadline, window, overload_phase, t0, notes, manifest
insert into manifests values (
    $source_id, $name, $capacity, $deadline, $window, $overload_phase, $t0, $notes, $manifest::json
)
