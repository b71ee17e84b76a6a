"""torch.distributed.ReduceOp for twinccl.distributed (torch's own ReduceOp values work too)."""
from ._twinccl import InvalidArgument


class ReduceOp:
    """SUM, PRODUCT, MIN, MAX, AVG; PREMUL_SUM through _make_nccl_premul_sum(factor)."""

    def __init__(self, kind, scalar=None):
        self.kind = kind
        self.scalar = scalar

    def __repr__(self):
        if self.kind == "premul_sum" and self.scalar is not None:
            return "ReduceOp.PREMUL_SUM(%r)" % self.scalar
        return "ReduceOp." + _NAMES[self.kind]

    def __eq__(self, other):
        return isinstance(other, ReduceOp) and (self.kind, self.scalar) == (other.kind,
                                                                             other.scalar)

    def __hash__(self):
        return hash((self.kind, self.scalar))


_KINDS = {"SUM": "sum", "PRODUCT": "prod", "MIN": "min", "MAX": "max", "AVG": "avg",
          "PREMUL_SUM": "premul_sum"}
_NAMES = {v: k for k, v in _KINDS.items()}
for _name, _kind in _KINDS.items():
    setattr(ReduceOp, _name, ReduceOp(_kind))


def _make_nccl_premul_sum(factor):
    """ReduceOp.PREMUL_SUM with this rank's factor (a number or a one-element tensor), as torch."""
    if hasattr(factor, "item"):
        factor = factor.item()
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise InvalidArgument("_make_nccl_premul_sum: factor must be a number, got %r" % (factor,))
    return ReduceOp("premul_sum", float(factor))


_TORCH_KINDS = {}  # torch's RedOpType (a ReduceOp's .op) -> (kind, 1.0): a dict lookup per call


def reduce_op(op, what):
    """(kind, scalar) for the extension; torch.distributed.ReduceOp values are accepted."""
    key = getattr(op, "op", None)
    if key is not None:
        known = _TORCH_KINDS.get(key)
        if known is not None:
            return known
    if isinstance(op, ReduceOp):
        if op.kind == "premul_sum" and op.scalar is None:
            raise InvalidArgument("%s: PREMUL_SUM needs its factor: op=_make_nccl_premul_sum(f)"
                                  % what)
        return op.kind, 1.0 if op.scalar is None else op.scalar
    inner = getattr(op, "op", op)  # torch 1.13: ReduceOp objects hold a RedOpType enum
    name = getattr(inner, "name", None) or str(inner).rsplit(".", 1)[-1]
    if name in _KINDS and name != "PREMUL_SUM":
        if key is not None and type(key).__name__ == "RedOpType":
            _TORCH_KINDS[key] = (_KINDS[name], 1.0)
        return _KINDS[name], 1.0
    if name == "PREMUL_SUM":
        raise InvalidArgument("%s: torch's PREMUL_SUM does not expose its factor: use "
                              "twinccl.distributed._make_nccl_premul_sum(f)" % what)
    if name in ("BAND", "BOR", "BXOR"):
        raise InvalidArgument("%s: ReduceOp.%s is not supported: NCCL has no bitwise reductions "
                              "(torch's NCCL backend refuses it too; Gloo does them on integer "
                              "tensors); SUM, PRODUCT, MIN, MAX, AVG, PREMUL_SUM are" % (what, name))
    raise InvalidArgument("%s: op=%s is not supported (SUM, PRODUCT, MIN, MAX, AVG, PREMUL_SUM)"
                          % (what, name or repr(op)))
