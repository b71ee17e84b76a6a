"""torch's object collectives (pickled, as torch does): all_gather_object, broadcast_object_list.
Pickle runs arbitrary code on load: use them with objects of your own program only, as torch."""
import pickle

import numpy as np

from ._twinccl import InvalidArgument
from ._groups import get_group_rank, resolve
from ._tensors import call_site


def all_gather_object(object_list, obj, group=None):
    site = call_site()
    comm = resolve(group)
    if comm is None:
        return None
    n = comm.size
    if not isinstance(object_list, list) or len(object_list) != n:
        raise InvalidArgument("all_gather_object: object_list must be a list of %d entries (the "
                              "group's size)" % n)
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    sizes = _pickled_sizes(comm, data, site)
    width = int(sizes.max())
    mine = np.zeros(width, dtype=np.uint8)
    mine[:data.size] = data
    out = np.zeros(n * width, dtype=np.uint8)
    comm.all_gather_into_tensor(out, mine, "uint8", False, *site)
    for r in range(n):
        object_list[r] = pickle.loads(out[r * width:r * width + int(sizes[r])].tobytes())


def broadcast_object_list(object_list, src=0, group=None, device=None):
    site = call_site()
    if device is not None:
        raise InvalidArgument("broadcast_object_list: device is not supported (CPU ranks)")
    comm = resolve(group)
    if comm is None:
        return None
    if not isinstance(object_list, list):
        raise InvalidArgument("broadcast_object_list: object_list must be a list")
    root = get_group_rank(group, src, "broadcast_object_list's src")
    n = len(object_list)
    sizes = np.zeros(n, dtype=np.int64)
    blobs = []
    if comm.rank == root:
        blobs = [pickle.dumps(o) for o in object_list]
        sizes[:] = [len(b) for b in blobs]
    comm.broadcast(sizes, "int64", root, False, *site)
    data = np.zeros(int(sizes.sum()), dtype=np.uint8)
    if comm.rank == root:
        data[:] = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    comm.broadcast(data, "uint8", root, False, *site)
    first = 0
    for i in range(n):
        object_list[i] = pickle.loads(data[first:first + int(sizes[i])].tobytes())
        first += int(sizes[i])


def _pickled_sizes(comm, data, site):
    """Every rank's pickle size (int64 all_gather)."""
    sizes = np.zeros(comm.size, dtype=np.int64)
    comm.all_gather_into_tensor(sizes, np.array([data.size], dtype=np.int64), "int64", False,
                                *site)
    return sizes


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    site = call_site()
    comm = resolve(group)
    if comm is None:
        return None
    root = get_group_rank(group, dst, "gather_object's dst")
    n = comm.size
    if comm.rank == root and (not isinstance(object_gather_list, list) or
                              len(object_gather_list) != n):
        raise InvalidArgument("gather_object: object_gather_list must be a list of %d entries on "
                              "the destination rank" % n)
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    sizes = _pickled_sizes(comm, data, site)
    width = int(sizes.max())
    mine = np.zeros(width, dtype=np.uint8)
    mine[:data.size] = data
    out = [np.zeros(width, dtype=np.uint8) for _ in range(n)] if comm.rank == root else []
    comm.gather(mine, out, "uint8", root, False, *site)
    for r, blob in enumerate(out):
        object_gather_list[r] = pickle.loads(blob[:int(sizes[r])].tobytes())


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0,
                        group=None):
    site = call_site()
    comm = resolve(group)
    if comm is None:
        return None
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise InvalidArgument("scatter_object_list: scatter_object_output_list must be a "
                              "non-empty list (its first entry receives the object)")
    root = get_group_rank(group, src, "scatter_object_list's src")
    n = comm.size
    sizes = np.zeros(n, dtype=np.int64)
    blobs = []
    if comm.rank == root:
        if not isinstance(scatter_object_input_list, list) or len(scatter_object_input_list) != n:
            raise InvalidArgument("scatter_object_list: scatter_object_input_list must be a list "
                                  "of %d entries on the source rank" % n)
        blobs = [np.frombuffer(pickle.dumps(o), dtype=np.uint8) for o in scatter_object_input_list]
        sizes[:] = [b.size for b in blobs]
    comm.broadcast(sizes, "int64", root, False, *site)
    width = int(sizes.max())
    padded = []
    for b in blobs:
        p = np.zeros(width, dtype=np.uint8)
        p[:b.size] = b
        padded.append(p)
    mine = np.zeros(width, dtype=np.uint8)
    comm.scatter(mine, padded, "uint8", root, False, *site)
    scatter_object_output_list[0] = pickle.loads(mine[:int(sizes[comm.rank])].tobytes())
