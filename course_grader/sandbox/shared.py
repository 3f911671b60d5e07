"""Large public arrays that every sandbox reads from one file instead of receiving them with each answer's cases.

bert_block's cases hold all-MiniLM-L6-v2's block 1 (14 MB in float64), the
same objects in every case and for every learner: sent with the cases, they
were encoded, piped to the runner, passed on to the answer's process and
read again for each learner (25 ms of sending and as much again inside the
sandbox). ``Shared.add`` writes such an array once per grading run into the
session's folder (``shared/<sha256>.npy``), which every sandbox sees
read-only at ``/tmp/grader``; a case's inputs then carry a marker in its
place (``marked``), which the answer's process replaces by the file, mapped
read-only (``answer.resolve_shared``).

Only arrays of the visible cases are shared: they are public (the self-check
shows them), and the hidden cases' own inputs always travel with them. An
array is known by its identity: the hidden cases take the model's weights
from the same cached objects (``exercises.pretrained.minilm_params``).
"""

import hashlib
import os

import numpy as np

#: The smallest array worth a file: all-MiniLM-L6-v2's weight matrices (1.2 to 4.7 MB), not its biases.
SHARED_BYTES = 2**20
#: The key of the marker a shared array leaves in a case's inputs: ``{MARKER: "<sha256 of its .npy>"}``.
MARKER = "__grader_shared__"


class Shared:
    """The arrays shared through ``folder`` (made here): ``{id(array): (array, name)}``, each kept alive."""

    def __init__(self, folder):
        self.folder, self.arrays = folder, {}
        self.folder.mkdir(mode=0o755, exist_ok=True)

    def add(self, array):
        """Share ``array`` (a numpy array) from now on; its file is written once."""
        if id(array) in self.arrays:
            return
        data = np.ascontiguousarray(array)
        header = f"{data.dtype.str} {data.shape}".encode()
        name = hashlib.sha256(header + data.tobytes()).hexdigest()
        path = self.folder / f"{name}.npy"
        if not path.exists():
            np.save(self.folder / f".{name}.npy", data, allow_pickle=False)
            os.replace(self.folder / f".{name}.npy", path)
            path.chmod(0o444)
        self.arrays[id(array)] = (array, name)

    def add_large(self, value):
        """Share every array of at least ``SHARED_BYTES`` in ``value`` (through its lists, tuples and dicts)."""
        if isinstance(value, np.ndarray):
            if value.nbytes >= SHARED_BYTES and value.dtype.kind in "biuf":
                self.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                self.add_large(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self.add_large(item)

    def marked(self, value):
        """``value`` with each shared array replaced by its marker (new containers; nothing else copied)."""
        if isinstance(value, np.ndarray):
            known = self.arrays.get(id(value))
            return {MARKER: known[1]} if known is not None and known[0] is value else value
        if isinstance(value, dict):
            return {key: self.marked(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.marked(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self.marked(item) for item in value)
        return value
