"""What a TwinCCL group says its backend is: the one the script asked for, as torch answers for a
group of that backend. Scripts branch on it (`if dist.get_backend() == "nccl": device =
"cuda"`, detectron2's `dist.get_backend() == "nccl"` before making a Gloo group for objects,
fairseq's choice of device for its object gather), and so does torch: ZeroRedundancyOptimizer's
overlap hook refuses Gloo, torch.distributed.nn's all_to_all scatters on Gloo, its all_gather
backward reduce-scatters on NCCL. Before, every group answered 'twinccl' (`get_backend`,
`get_backend_config`), so a script that had asked for gloo took its other branch. The group's
own `name()` stays 'twinccl': torch's C++ maps that name to the group's C++ backend (DDP's
logger: "Could not find backend type 1 for Process Group with name gloo"), which a TwinCCL group
(a Python ProcessGroup) has not.

How it works: the groups are made with TwinCCL's backend (torch keeps ("twinccl", store) in
`_world.pg_map` and "cpu:twinccl" in `_world.pg_backend_config`); once torch has recorded a group,
`note()` puts the requested name there instead, with torch's own BackendConfig of that name
(`init_process_group()` without a backend: 'undefined', config "cpu:gloo" on a CPU machine, as
torch says). New groups without a backend take the default group's, as in torch. The run's own
group, made before the script's `init_process_group`, says 'twinccl' until the script names
one."""
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d


def requested(backend):
    """The Backend torch records for `backend` (None: 'undefined', as init_process_group)."""
    return dist.Backend(backend) if backend else dist.Backend(dist.Backend.UNDEFINED)


def _config(backend):
    try:
        return c10d.BackendConfig(backend)
    except (ValueError, RuntimeError, TypeError):
        return None


def note(pg, backend):
    """Records `backend` (what the script asked for) as `pg`'s backend in torch's tables (torch
    2.x; torch 1.x keeps 'twinccl'). An unknown name is torch's error where torch raises it (in
    init_process_group and new_group, before the group is made); here it keeps 'twinccl'."""
    world = getattr(c10d, "_world", None)
    if world is None or pg is None or pg not in world.pg_map:
        return
    backend = requested(backend)
    config = _config(backend)
    if config is None:
        return
    world.pg_map[pg] = (backend, world.pg_map[pg][1])
    world.pg_backend_config[pg] = str(config)

