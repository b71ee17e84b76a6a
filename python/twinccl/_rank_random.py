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

    def _full(self):
        return (_random_fingerprint(), random.getstate())

    def save(self):
        installed = self._installed
        if installed is not None and installed[0] is not None and \
                installed[0] == _random_fingerprint():
            return installed
        return self._full()

    def initial(self, rank):
        return (None, random.Random().getstate()) if self._fresh else self._caller

    def restore(self, value):
        fingerprint = _random_fingerprint()
        if fingerprint is None or fingerprint != value[0]:
            random.setstate(value[1])
            fingerprint = _random_fingerprint()
        self._installed = (fingerprint, value[1])


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
    """torch's default CPU generator (torch.manual_seed, torch.randn, DataLoader's shuffle)."""
    def __init__(self):
        torch = sys.modules.get("torch")
        self._caller = torch.default_generator.get_state() if torch else None

    def save(self):
        torch = sys.modules.get("torch")
        return torch.default_generator.get_state() if torch else None

    def initial(self, rank):
        return self._caller

    def restore(self, value):
        torch = sys.modules.get("torch")
        if torch is None:
            return
        if value is None:  # torch imported during the run: a fresh process's state
            value = torch.Generator().get_state()
        torch.default_generator.set_state(value)


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

    @staticmethod
    def _full(np):
        return (_numpy_fingerprint(np), np.random.get_state())

    def save(self):
        np = sys.modules.get("numpy")
        if np is None:
            return None
        if self._installed is not None and self._installed[0] is not None and \
                self._installed[0] == _numpy_fingerprint(np):
            return self._installed  # not drawn from since it was installed
        return self._full(np)

    def initial(self, rank):
        return None if self._fresh else self._caller

    def restore(self, value):
        np = sys.modules.get("numpy")
        if np is None:
            return
        if value is None:  # seeded from the OS, as in a new process
            value = (None, np.random.RandomState().get_state())
        fingerprint = _numpy_fingerprint(np)
        if fingerprint is None or fingerprint != value[0]:
            np.random.set_state(value[1])
            fingerprint = _numpy_fingerprint(np)
        self._installed = (fingerprint, value[1])


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
