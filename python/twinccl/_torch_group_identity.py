"""What torch asks a process group about itself beyond rank and size, for TwinCCL's groups
(_torch_backend.TwinProcessGroup): its name and description, which torch's C++ keeps in a group's
backends (a TwinCCL group has none), and the devices it serves."""
import torch


class GroupIdentity:
    def setGroupName(self, name):
        self._name = name

    def getGroupName(self):
        return getattr(self, "_name", "")

    def setGroupDesc(self, desc):
        self._desc = desc

    def getGroupDesc(self):
        return getattr(self, "_desc", "")

    @property
    def group_name(self):
        return self.getGroupName()

    @property
    def group_desc(self):
        return self.getGroupDesc()

    @property
    def _device_types(self):
        """The devices the group serves, as a Gloo group answers: the CPU. torch reads it where
        it picks a device for its own tensors: dcp.async_save refused the group ("A CPU backend
        must be enabled for async save"), set_model_state_dict(broadcast_from_rank0=True) failed
        with IndexError, _get_pg_default_device with RuntimeError (C++'s list is empty: no
        backend is registered on this Python group)."""
        return [torch.device("cpu")]
