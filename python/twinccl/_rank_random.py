"""The random generators of the rank state (_rank_state.RankStates' parts): Python's `random`,
torch's default CPU generator, NumPy's global RandomState. Each part saves and restores its
generator's state at a hand-over. Python's and NumPy's getstate() cost 8-80 us, so their parts
compare a fingerprint first (the Mersenne Twister's words read in place through ctypes, ~1-2 us;
the layout probed once and checked against getstate(), else the exact full copy every time) and
copy the state only when a rank drew numbers since it was installed.
"""
import ctypes
import random
import struct
import sys


class _Fingerprinted:
    """A generator handed over by fingerprint: save() compares the state's bytes read in place
    with those of the state it installed and copies the full state only when a rank drew numbers
    since; restore() sets the full state only when the bytes differ. A part names its module
    (None until imported: nothing to save), its fingerprint (None where the layout was not the
    one probed: the full copy every time) and its full state's get, set and fresh value."""
    def __init__(self, fresh):
        self._fresh = fresh
        module = self._module()
        self._caller = self._full(module) if module is not None else None
        self._installed = None  # (fingerprint, state) of the state in place
        self._now = None  # the fingerprint save() found, for the restore() that follows it

    def _full(self, module):
        return (self._fingerprint(module), self._get(module))

    def save(self):
        module = self._module()
        if module is None:
            return None
        installed = self._installed
        if installed is not None and installed[0] is not None:
            self._now = self._fingerprint(module)
            if installed[0] == self._now:
                return installed  # not drawn from since it was installed
        value = self._full(module)
        self._now = value[0]
        return value

    def initial(self, rank):
        return None if self._fresh else self._caller

    def restore(self, value):
        module = self._module()
        if module is None:
            return
        if value is None:  # a fresh state, as in a new process
            value = (None, self._fresh_state(module))
        fingerprint = self._now if self._now is not None else self._fingerprint(module)
        self._now = None
        if fingerprint is None or fingerprint != value[0]:
            self._set(module, value[1])
            fingerprint = self._fingerprint(module)
        self._installed = (fingerprint, value[1])


class PythonRandom(_Fingerprinted):
    """Python's `random` (its module functions are methods of random._inst). getstate() builds
    a tuple of 625 ints (~8 us), so as for NumPy a hand-over compares a fingerprint first: the
    generator's words and position read in place (~1 us; offsets found once, _probe_random)."""
    _module = staticmethod(lambda: random)
    _fingerprint = staticmethod(lambda module: _random_fingerprint())
    _get = staticmethod(lambda module: module.getstate())
    _set = staticmethod(lambda module, state: module.setstate(state))
    _fresh_state = staticmethod(lambda module: module.Random().getstate())

    def slots(self):
        """The generator's words in place and its cached Gaussian (rank_slots.h), or None."""
        inst = random._inst
        if _random_fingerprint() is None:
            return None
        return [("memory", id(inst) + _RANDOM_LAYOUT[0][1], 4 + 624 * 4, inst),
                ("keys", inst.__dict__, ("gauss_next",))]


_RANDOM_LAYOUT = []


def _random_fingerprint():
    """The bytes of random._inst's Mersenne Twister (position and 624 words) and its cached
    Gaussian, or None where this CPython's layout is not the one probed."""
    inst = random._inst
    if not _RANDOM_LAYOUT or _RANDOM_LAYOUT[0][0] != id(inst):
        _RANDOM_LAYOUT[:] = [(id(inst), _probe_random(inst))]
    offset = _RANDOM_LAYOUT[0][1]
    if offset is None:
        return None
    return (ctypes.string_at(id(inst) + offset, 4 + 624 * 4), inst.gauss_next)


def _probe_random(inst):
    """The offset of {int index; uint32_t state[624]} in a _random.Random object (CPython's
    Modules/_randommodule.c), checked against getstate()."""
    try:
        words = inst.getstate()[1]
        raw = ctypes.string_at(id(inst), type(inst).__basicsize__)
        at = raw.find(struct.pack("=624I", *words[:624]))
        if at < 4 or struct.unpack_from("=i", raw, at - 4)[0] != words[624]:
            return None
        return at - 4
    except Exception:  # noqa: BLE001 (any surprise: the exact, slower path)
        return None


class TorchRandom(_Fingerprinted):
    """torch's default CPU generator (torch.manual_seed, torch.randn, DataLoader's shuffle). Its
    get_state() costs ~2 us, so as for NumPy a hand-over compares a fingerprint first (the
    generator's Mersenne Twister and cached normal samples read in place, _torch_fingerprint).
    A run's ranks start from the caller's state; one that imports torch, from a fresh one."""
    _module = staticmethod(lambda: sys.modules.get("torch"))
    _fingerprint = staticmethod(lambda torch: _torch_fingerprint(torch))
    _get = staticmethod(lambda torch: torch.default_generator.get_state())
    _set = staticmethod(lambda torch, state: torch.default_generator.set_state(state))
    _fresh_state = staticmethod(lambda torch: torch.Generator().get_state())

    def __init__(self):
        super().__init__(False)

    def slots(self):
        """The generator's bytes (the fingerprint's window: its whole state), or None."""
        torch = sys.modules.get("torch")
        if torch is None:
            return []
        if _torch_fingerprint(torch) is None:
            return None
        g = torch.default_generator
        impl = ctypes.c_void_p.from_address(id(g) + _TORCH_IMPL_OFFSET).value
        offset, size = _TORCH_LAYOUT[(id(g), impl)]
        return [("memory", impl + offset, size, g)]


_TORCH_LAYOUT = {}
_TORCH_WORDS = 624 * 4  # at::mt19937's state_ (uint32[624])


def _torch_fingerprint(torch):
    """The bytes of torch's default CPU generator (CPUGeneratorImpl: at::mt19937's seed_, left_,
    seeded_, next_, state_[624], then the cached float and double normal samples), or None where
    the layout is not the one probed (then every hand-over copies get_state())."""
    g = torch.default_generator
    impl = ctypes.c_void_p.from_address(id(g) + _TORCH_IMPL_OFFSET).value
    where = _TORCH_LAYOUT.get((id(g), impl))
    if where is None:
        where = _TORCH_LAYOUT[(id(g), impl)] = _probe_torch_layout(torch, g, impl)
    if where is False:
        return None
    return ctypes.string_at(impl + where[0], where[1])


_TORCH_IMPL_OFFSET = 16  # THPGenerator: PyObject_HEAD, then at::Generator (one intrusive_ptr)


def _probe_torch_layout(torch, g, impl):
    """(offset, size) of the fingerprint in the generator's C++ object, found by the state words
    of get_state() (torch's legacy THGeneratorState: seed, left, seeded, next, state[624] as
    uint64) and checked: every draw below changes get_state() exactly when it changes the bytes."""
    try:
        saved = g.get_state()
        raw_state = saved.numpy().tobytes()
        seed, left = struct.unpack_from("=Qi", raw_state, 0)
        words = struct.unpack_from("=624Q", raw_state, 24)
        key = struct.pack("=624I", *[w & 0xFFFFFFFF for w in words])
        if not impl:
            return False
        at = -1
        for offset in range(8, 512, 4):  # state_ lies a few fields into the object
            if ctypes.string_at(impl + offset, 16) == key[:16] and \
                    ctypes.string_at(impl + offset, _TORCH_WORDS) == key:
                at = offset
                break
        if at < 20 or struct.unpack_from("=Qi", ctypes.string_at(impl + at - 20, 12)) != \
                (seed, left):
            return False
        where = (at - 20, 20 + _TORCH_WORDS + 28)  # mt19937's pod, optional<float>, <double>
        window = lambda: ctypes.string_at(impl + where[0], where[1])  # noqa: E731
        draws = [lambda: torch.randn(1, dtype=torch.float64)] * 2 + \
            [lambda: torch.randn(1)] * 2 + [lambda: torch.rand(3), lambda: torch.randperm(5),
                                            lambda: torch.randint(0, 9, (2,))]
        try:
            for draw in draws:
                state, bytes_before = g.get_state(), window()
                draw()
                if (not torch.equal(state, g.get_state())) != (bytes_before != window()):
                    return False
        finally:
            g.set_state(saved)
        # (set_state may leave a stale value in a cached sample it marks absent: then equal states
        # can differ in these bytes, which costs a copy, never a wrong state)
        return where
    except Exception:  # noqa: BLE001 (any surprise: the exact, slower path)
        return False


class NumpyRandom(_Fingerprinted):
    """NumPy's global RandomState (np.random.seed, np.random.rand). Its get_state/set_state cost
    ~80 us each, so a hand-over compares a fingerprint first (the MT19937 key and position, read
    through the bit generator's ctypes address, ~2 us; see _numpy_fingerprint) and copies the full
    state only when a rank drew numbers since it was installed. A fresh state is seeded from the
    OS, as in a new process."""
    _module = staticmethod(lambda: sys.modules.get("numpy"))
    _fingerprint = staticmethod(lambda np: _numpy_fingerprint(np))
    _get = staticmethod(lambda np: np.random.get_state())
    _set = staticmethod(lambda np, state: np.random.set_state(state))
    _fresh_state = staticmethod(lambda np: np.random.RandomState().get_state())

    def slots(self):
        """The MT19937 words and position, and the cached Gaussian, or None."""
        np = sys.modules.get("numpy")
        if np is None:
            return []
        if _numpy_fingerprint(np) is None:
            return None
        rand = np.random.mtrand._rand
        state_address, gauss_offset = _NUMPY_LAYOUT[id(rand)]
        if rand._bit_generator.ctypes.state_address != state_address:
            return None  # np.random.set_bit_generator replaced it: the Python parts copy
        return [("memory", state_address, 624 * 4 + 4, rand._bit_generator),
                ("memory", id(rand) + gauss_offset - 8, 16, rand)]


def _numpy_fingerprint(np):
    """The bytes of the global RandomState's MT19937 state (key[624], pos) and of its cached
    Gaussian (has_gauss, gauss: offsets found once by setting known values), or None where this
    NumPy's layout is not the one probed (then every hand-over copies the full state)."""
    rand = np.random.mtrand._rand
    where = _NUMPY_LAYOUT.get(id(rand))
    if where is None:
        where = _NUMPY_LAYOUT[id(rand)] = _probe_numpy_layout(np, rand)
    if where is False:
        return None
    state_address, gauss_offset = where
    return (ctypes.string_at(state_address, 624 * 4 + 4) +
            ctypes.string_at(id(rand) + gauss_offset - 8, 16))


_NUMPY_LAYOUT = {}


def _probe_numpy_layout(np, rand):
    try:
        bit_generator = rand._bit_generator
        if type(bit_generator).__name__ != "MT19937":
            return False
        state_address = bit_generator.ctypes.state_address
        saved = rand.get_state()
        size = type(rand).__basicsize__
        try:
            offsets = []
            for value in (1.2345678912345e-301, -7.5e200):
                rand.set_state(saved[:3] + (1, value))
                raw = ctypes.string_at(id(rand), size)
                offsets.append(raw.find(struct.pack("d", value)))
                has_gauss = struct.unpack_from("i", raw, offsets[-1] - 8)[0]
                if has_gauss != 1:
                    return False
            key = ctypes.string_at(state_address, 624 * 4)
            if offsets[0] < 8 or offsets[0] != offsets[1] or \
                    key != saved[1].astype("<u4").tobytes():
                return False
        finally:
            rand.set_state(saved)
        return (state_address, offsets[0])
    except Exception:  # noqa: BLE001 (any surprise: the slow, exact path)
        return False


class MindSporeSeeds:
    """MindSpore's global seed (mindspore.set_seed) and its per-operation seed counters, the state
    its CPU random operations draw from (ops.rand, ops.randn, ops.dropout, ops.uniform: each call
    takes (global seed, the operation's counter) and steps the counter; mindspore/common/seed.py,
    _get_graph_seed): module globals of mindspore.common.seed, the counters a dict changed in
    place. Each rank its own, as each msrun process: a rank starts with the caller's seed and a
    copy of its counters (fresh: none set, as a new process), then the two globals are swapped
    (the counters' dict by reference: it is the rank's own). Before, the ranks shared them: a
    rank's set_seed reseeded every rank, and their draws interleaved. Not swapped: the
    default_generator of mint's random operations (none runs on MindSpore's CPU build) and the
    dataset seed (C++)."""
    _NAMES = ("_GLOBAL_SEED", "_KERNEL_SEED")

    def __init__(self, fresh):
        self._fresh = fresh
        module = sys.modules.get("mindspore.common.seed")
        self._caller = self.save() if module is not None else None

    @staticmethod
    def _module():
        return sys.modules.get("mindspore.common.seed")

    def save(self):
        module = self._module()
        if module is None:
            return None
        return (module._GLOBAL_SEED, module._KERNEL_SEED)

    def initial(self, rank):
        if self._fresh or self._caller is None:
            return None
        return (self._caller[0], dict(self._caller[1]))  # the rank's own counters

    def restore(self, value):
        module = self._module()
        if module is None:
            return
        if value is None:  # a new process's: no seed, no counters
            value = (None, {})
        module._GLOBAL_SEED, module._KERNEL_SEED = value

    def slots(self):
        module = self._module()
        return [] if module is None else [("keys", module.__dict__, self._NAMES)]
