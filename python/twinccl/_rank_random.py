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


class PythonRandom:
    """Python's `random` (its module functions are methods of random._inst). getstate() builds
    a tuple of 625 ints (~8 us), so as for NumPy a hand-over compares a fingerprint first: the
    generator's words and position read in place (~1 us; offsets found once, _probe_random)."""
    def __init__(self, fresh):
        self._caller = self._full()
        self._fresh = fresh
        self._installed = None  # (fingerprint, state) of the state in place
        self._now = None  # the fingerprint save() found, for the restore() that follows it

    def _full(self):
        return (_random_fingerprint(), random.getstate())

    def save(self):
        installed = self._installed
        if installed is not None and installed[0] is not None:
            self._now = _random_fingerprint()
            if installed[0] == self._now:
                return installed
        value = self._full()
        self._now = value[0]
        return value

    def initial(self, rank):
        return (None, random.Random().getstate()) if self._fresh else self._caller

    def restore(self, value):
        fingerprint = self._now if self._now is not None else _random_fingerprint()
        self._now = None
        if fingerprint is None or fingerprint != value[0]:
            random.setstate(value[1])
            fingerprint = _random_fingerprint()
        self._installed = (fingerprint, value[1])

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


class TorchRandom:
    """torch's default CPU generator (torch.manual_seed, torch.randn, DataLoader's shuffle). Its
    get_state() costs ~2 us, so as for NumPy a hand-over compares a fingerprint first (the
    generator's Mersenne Twister and cached normal samples read in place, _torch_fingerprint)."""
    def __init__(self):
        torch = sys.modules.get("torch")
        self._caller = self._full(torch) if torch else None
        self._installed = None  # (fingerprint, state) of the state in place
        self._now = None  # the fingerprint save() found, for the restore() that follows it

    @staticmethod
    def _full(torch):
        return (_torch_fingerprint(torch), torch.default_generator.get_state())

    def save(self):
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        if self._installed is not None and self._installed[0] is not None:
            self._now = _torch_fingerprint(torch)
            if self._installed[0] == self._now:
                return self._installed  # not drawn from since it was installed
        value = self._full(torch)
        self._now = value[0]
        return value

    def initial(self, rank):
        return self._caller

    def restore(self, value):
        torch = sys.modules.get("torch")
        if torch is None:
            return
        if value is None:  # torch imported during the run: a fresh process's state
            value = (None, torch.Generator().get_state())
        fingerprint = self._now if self._now is not None else _torch_fingerprint(torch)
        self._now = None
        if fingerprint is None or fingerprint != value[0]:
            torch.default_generator.set_state(value[1])
            fingerprint = _torch_fingerprint(torch)
        self._installed = (fingerprint, value[1])

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


class NumpyRandom:
    """NumPy's global RandomState (np.random.seed, np.random.rand). Its get_state/set_state cost
    ~80 us each, so a hand-over compares a fingerprint first (the MT19937 key and position, read
    through the bit generator's ctypes address, ~2 us; see _numpy_fingerprint) and copies the full
    state only when a rank drew numbers since it was installed."""
    def __init__(self, fresh):
        self._fresh = fresh
        np = sys.modules.get("numpy")
        self._caller = self._full(np) if np else None
        self._installed = None  # (fingerprint, full state) of the state in place
        self._now = None  # the fingerprint save() found, for the restore() that follows it

    @staticmethod
    def _full(np):
        return (_numpy_fingerprint(np), np.random.get_state())

    def save(self):
        np = sys.modules.get("numpy")
        if np is None:
            return None
        if self._installed is not None and self._installed[0] is not None:
            self._now = _numpy_fingerprint(np)
            if self._installed[0] == self._now:
                return self._installed  # not drawn from since it was installed
        value = self._full(np)
        self._now = value[0]
        return value

    def initial(self, rank):
        return None if self._fresh else self._caller

    def restore(self, value):
        np = sys.modules.get("numpy")
        if np is None:
            return
        if value is None:  # seeded from the OS, as in a new process
            value = (None, np.random.RandomState().get_state())
        fingerprint = self._now if self._now is not None else _numpy_fingerprint(np)
        self._now = None
        if fingerprint is None or fingerprint != value[0]:
            np.random.set_state(value[1])
            fingerprint = _numpy_fingerprint(np)
        self._installed = (fingerprint, value[1])

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
