"""Attributes of other libraries replaced for the length of a run (torch.cuda under cuda_on_cpu,
MindSpore's communication functions), and put back as they were, absent ones removed again."""
_MISSING = object()


def replace(patches, saved):
    """Sets owner.name = value for each (owner, name, value) of `patches`; appends to `saved`
    what put_back() needs (before each change: a failure midway leaves `saved` complete)."""
    for owner, name, value in patches:
        saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
        setattr(owner, name, value)


def put_back(saved):
    """Undoes replace(), last change first."""
    for owner, name, value in reversed(saved):
        if value is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, value)
